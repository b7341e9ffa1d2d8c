// /device: a person approves (or denies) a `uspark login` waiting with a user code (RFC 8628),
// granting projects and access within what their own token may do (a read token grants read only).
// The form starts from what the device asked for (`uspark login --project … --scope …`) and names
// the machine that asked; an answer ends on a page of its own, without the form.

import { mayAccess, type Access, type DeviceRequest, type Grant } from "../../authority.js";
import { mayDeny } from "../../device.js";
import type { Visit, WebContext } from "../context.js";
import { html, type Html } from "../html.js";
import { csrfField, page, sendPage } from "../layout.js";

/** What the page says above the form, and the code to fill in (the one typed, after an answer that failed). */
interface Shown {
  message?: { error: boolean; text: string };
  code?: string;
}

export async function devicePage(
  visit: Visit,
  ctx: WebContext,
  { message, code = visit.url.searchParams.get("user_code") ?? "" }: Shown = {},
): Promise<void> {
  if (!ctx.devices) {
    const body = html`<p>Device login is not available on this server.</p>`;
    return sendPage(visit.res, 200, page({ title: "Approve a device", session: visit.session, body }));
  }
  const projects = (await ctx.store.projects()).filter((p) => mayAccess(visit.principal, p.id, "read"));
  const { principal } = visit;
  const mayWrite = principal.kind === "admin" || principal.access === "write";
  // The login the code names, if it waits: what its device asked for fills the form in.
  const asked = code.trim() === "" ? undefined : (await ctx.devices.find(code))?.asked;
  const ticked = new Set(asked?.projects ?? []);
  const access = asked?.access === "write" && mayWrite ? "write" : "read";
  const noProject =
    principal.kind === "admin"
      ? html`<p class="muted">No project yet: <a href="/">create one</a> first.</p>`
      : html`<p class="muted">Your token may see no project.</p>`;
  const body = html`${message ? html`<p class="${message.error ? "error" : ""}" role="status">${message.text}</p>` : ""}
${
  asked
    ? askedHtml(
        asked,
        projects.map((p) => p.id),
      )
    : html`<p>Type the code <code>uspark login</code> shows, choose what it may do, and approve it.</p>`
}
<form method="post" action="/device" class="card">
${csrfField(visit.session)}
<label for="user-code">Code</label>
<input id="user-code" name="user_code" value="${code}" required autocomplete="off" autocapitalize="characters">
<fieldset><legend>Projects</legend>
${projects.length === 0 ? noProject : projects.map((p, i) => html`<label><input type="checkbox" name="project" value="${p.id}" id="project-${i}"${ticked.has(p.id) ? html` checked` : ""}> ${p.id}</label>`)}
</fieldset>
<label for="access">Access</label>
<select id="access" name="access"><option value="read">read</option>${mayWrite ? html`<option value="write"${access === "write" ? html` selected` : ""}>read and write</option>` : ""}</select>
<p><button type="submit" name="action" value="approve">Approve</button>${mayDeny(principal) ? html` <button type="submit" name="action" value="deny">Deny</button>` : ""}</p>
</form>`;
  sendPage(visit.res, message?.error ? 400 : 200, page({ title: "Approve a device", session: visit.session, body }));
}

/** Which machine asked and for what; a project it named that this token may not see is said, not ticked. */
function askedHtml(asked: DeviceRequest, visible: readonly string[]): Html {
  const hidden = asked.projects.filter((id) => !visible.includes(id));
  const wants =
    asked.projects.length > 0
      ? html` for <strong>${asked.access ?? "read"}</strong> access to ${asked.projects.map((id, i) => html`${i > 0 ? ", " : ""}<code>${id}</code>`)}`
      : "";
  return html`<p class="asked"><code>uspark login</code> on <strong class="host">${asked.host ?? "an unnamed machine"}</strong> asks${wants}. Check that the code matches the one in its terminal.</p>${
    hidden.length > 0 ? html`<p class="muted">Not offered (no such project, or your token may not see it): ${hidden.join(", ")}.</p>` : ""
  }`;
}

/** The end of an answer: what was decided, and where to look next; no form (the same login is not answered twice). */
function answeredPage(visit: Visit, title: string, lines: Html): void {
  sendPage(
    visit.res,
    200,
    page({
      title,
      session: visit.session,
      body: html`<div class="notice" role="status">${lines}</div><p><a href="/device">Approve another device</a></p>`,
    }),
  );
}

export async function approveDevice(visit: Visit, ctx: WebContext, form: URLSearchParams): Promise<void> {
  const devices = ctx.devices;
  if (!devices) return devicePage(visit, ctx);
  const userCode = (form.get("user_code") ?? "").trim();
  const waiting = userCode === "" ? undefined : await devices.find(userCode);
  const machine = waiting?.asked?.host;
  const on = machine ? html` on <strong class="host">${machine}</strong>` : "";
  const failed = (text: string) => devicePage(visit, ctx, { message: { error: true, text }, code: userCode });
  if (!waiting) return failed("No login waits with that code: check it, or start uspark login again.");
  if (form.get("action") === "deny") {
    if ((await devices.deny(waiting.userCode, visit.principal)) === "forbidden")
      return failed("Only the admin token may deny a login: leave it, it expires unanswered.");
    return answeredPage(
      visit,
      "Denied",
      html`<p><strong>Denied</strong>: <code>uspark login</code>${on} (code <code>${waiting.userCode}</code>) gets no token; it says so in its terminal.</p>`,
    );
  }
  const access: Access = form.get("access") === "write" ? "write" : "read";
  const grant: Grant = { projects: form.getAll("project"), access };
  if (grant.projects.length === 0) return failed("Choose at least one project for the login to use.");
  const outcome = await devices.approve(waiting.userCode, grant, visit.principal);
  if (outcome === "unknown") return failed("That login is no longer waiting (it expired or was answered): start uspark login again.");
  if (outcome === "forbidden") return failed("Your token may not grant that: choose projects and access within your own.");
  const what = html`a <strong>${access}</strong> token for ${grant.projects.map((id, i) => html`${i > 0 ? ", " : ""}<code>${id}</code>`)}`;
  return answeredPage(
    visit,
    "Approved",
    html`<p><strong>Approved: return to your terminal.</strong></p><p><code>uspark login</code>${on} (code <code>${waiting.userCode}</code>) gets ${what} at its next poll, within a few seconds, and saves it.</p>`,
  );
}
