// /device: a person approves (or denies) a `uspark login` waiting with a user code (RFC 8628),
// granting projects and access within what their own token may do (a read token grants read only).

import { mayAccess, type Access, type Grant } from "../../authority.js";
import { mayDeny } from "../../device.js";
import type { Visit, WebContext } from "../context.js";
import { html } from "../html.js";
import { csrfField, page, sendPage } from "../layout.js";

/** What the page says above the form, and the code to fill in (the one typed, after an answer that failed). */
interface Shown {
  message?: { error: boolean; text: string };
  code?: string;
}

export async function devicePage(visit: Visit, ctx: WebContext, { message, code = visit.url.searchParams.get("user_code") ?? "" }: Shown = {}): Promise<void> {
  if (!ctx.devices) {
    const body = html`<p>Device login is not available on this server.</p>`;
    return sendPage(visit.res, 200, page({ title: "Approve a device", session: visit.session, body }));
  }
  const projects = (await ctx.store.projects()).filter((p) => mayAccess(visit.principal, p.id, "read"));
  const { principal } = visit;
  const mayWrite = principal.kind === "admin" || principal.access === "write";
  const noProject = principal.kind === "admin" ? html`<p class="muted">No project yet: <a href="/">create one</a> first.</p>` : html`<p class="muted">Your token may see no project.</p>`;
  const body = html`${message ? html`<p class="${message.error ? "error" : ""}" role="status">${message.text}</p>` : ""}
<p>Type the code <code>uspark login</code> shows, choose what it may do, and approve it.</p>
<form method="post" action="/device" class="card">
${csrfField(visit.session)}
<label for="user-code">Code</label>
<input id="user-code" name="user_code" value="${code}" required autocomplete="off" autocapitalize="characters">
<fieldset><legend>Projects</legend>
${projects.length === 0 ? noProject : projects.map((p, i) => html`<label><input type="checkbox" name="project" value="${p.id}" id="project-${i}"> ${p.id}</label>`)}
</fieldset>
<label for="access">Access</label>
<select id="access" name="access"><option value="read">read</option>${mayWrite ? html`<option value="write">read and write</option>` : ""}</select>
<p><button type="submit" name="action" value="approve">Approve</button>${mayDeny(principal) ? html` <button type="submit" name="action" value="deny">Deny</button>` : ""}</p>
</form>`;
  sendPage(visit.res, message?.error ? 400 : 200, page({ title: "Approve a device", session: visit.session, body }));
}

export async function approveDevice(visit: Visit, ctx: WebContext, form: URLSearchParams): Promise<void> {
  const devices = ctx.devices;
  if (!devices) return devicePage(visit, ctx);
  const userCode = (form.get("user_code") ?? "").trim();
  const waiting = userCode === "" ? undefined : await devices.find(userCode);
  const failed = (text: string) => devicePage(visit, ctx, { message: { error: true, text }, code: userCode });
  if (!waiting) return failed("No login waits with that code: check it, or start uspark login again.");
  if (form.get("action") === "deny") {
    if ((await devices.deny(waiting.userCode, visit.principal)) === "forbidden") return failed("Only the admin token may deny a login: leave it, it expires unanswered.");
    return devicePage(visit, ctx, { message: { error: false, text: `Denied: the login with code ${waiting.userCode} gets no token.` } });
  }
  const access: Access = form.get("access") === "write" ? "write" : "read";
  const grant: Grant = { projects: form.getAll("project"), access };
  if (grant.projects.length === 0) return failed("Choose at least one project for the login to use.");
  const outcome = await devices.approve(waiting.userCode, grant, visit.principal);
  const text = {
    approved: `Approved: the login with code ${waiting.userCode} gets a ${access} token for ${grant.projects.length} project(s).`,
    unknown: "That login is no longer waiting (it expired or was answered): start uspark login again.",
    forbidden: "Your token may not grant that: choose projects and access within your own.",
  }[outcome];
  if (outcome !== "approved") return failed(text);
  return devicePage(visit, ctx, { message: { error: false, text } });
}
