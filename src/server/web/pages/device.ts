// /device: a person approves (or denies) a `uspark login` waiting with a user code (RFC 8628),
// granting projects and access within what their own token may do (a read token grants read only).

import { mayAccess, type Access, type Grant } from "../../authority.js";
import type { Visit, WebContext } from "../context.js";
import { html } from "../html.js";
import { csrfField, page, sendPage } from "../layout.js";

export async function devicePage(visit: Visit, ctx: WebContext, message?: { error: boolean; text: string }): Promise<void> {
  if (!ctx.devices) {
    const body = html`<p>Device login is not available on this server.</p>`;
    return sendPage(visit.res, 200, page({ title: "Approve a device", session: visit.session, body }));
  }
  const projects = (await ctx.store.projects()).filter((p) => mayAccess(visit.principal, p.id, "read"));
  const mayWrite = visit.principal.kind === "admin" || visit.principal.access === "write";
  const code = visit.url.searchParams.get("user_code") ?? "";
  const body = html`${message ? html`<p class="${message.error ? "error" : ""}" role="status">${message.text}</p>` : ""}
<p>Type the code <code>uspark login</code> shows, choose what it may do, and approve it.</p>
<form method="post" action="/device" class="card">
${csrfField(visit.session)}
<label for="user-code">Code</label>
<input id="user-code" name="user_code" value="${code}" required autocomplete="off" autocapitalize="characters">
<fieldset><legend>Projects</legend>
${projects.length === 0 ? html`<p class="muted">No project to grant.</p>` : projects.map((p, i) => html`<label><input type="checkbox" name="project" value="${p.id}" id="project-${i}"> ${p.id}</label>`)}
</fieldset>
<label for="access">Access</label>
<select id="access" name="access"><option value="read">read</option>${mayWrite ? html`<option value="write">read and write</option>` : ""}</select>
<p><button type="submit" name="action" value="approve">Approve</button> <button type="submit" name="action" value="deny">Deny</button></p>
</form>`;
  sendPage(visit.res, message?.error ? 400 : 200, page({ title: "Approve a device", session: visit.session, body }));
}

export async function approveDevice(visit: Visit, ctx: WebContext, form: URLSearchParams): Promise<void> {
  const devices = ctx.devices;
  if (!devices) return devicePage(visit, ctx);
  const userCode = (form.get("user_code") ?? "").trim();
  const waiting = userCode === "" ? undefined : await devices.find(userCode);
  if (!waiting) return devicePage(visit, ctx, { error: true, text: "No login waits with that code: check it, or start uspark login again." });
  if (form.get("action") === "deny") {
    await devices.deny(waiting.userCode);
    return devicePage(visit, ctx, { error: false, text: `Denied: the login with code ${waiting.userCode} gets no token.` });
  }
  const access: Access = form.get("access") === "write" ? "write" : "read";
  const grant: Grant = { projects: form.getAll("project"), access };
  const outcome = await devices.approve(waiting.userCode, grant, visit.principal);
  const text = {
    approved: `Approved: the login with code ${waiting.userCode} gets a ${access} token for ${grant.projects.length} project(s).`,
    unknown: "That login is no longer waiting (it expired or was answered): start uspark login again.",
    forbidden: "Your token may not grant that: choose projects and access within your own.",
  }[outcome];
  return devicePage(visit, ctx, { error: outcome !== "approved", text });
}
