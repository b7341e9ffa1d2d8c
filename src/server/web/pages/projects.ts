// `/`: the projects the token may see; the admin also gets a form that creates one.

import { isAdmin, mayAccess } from "../../authority.js";
import { HttpError } from "../../http.js";
import { validateProjectId } from "../../../api/validate.js";
import type { Visit, WebContext } from "../context.js";
import { html, webPath } from "../html.js";
import { csrfField, page, redirect, sendPage } from "../layout.js";
import { timeTag } from "../when.js";

export async function projectsPage(visit: Visit, ctx: WebContext, error?: string): Promise<void> {
  const projects = (await ctx.store.projects()).filter((project) => mayAccess(visit.principal, project.id, "read"));
  const rows = projects.map(
    (p) => html`<tr>
<td><a href="${webPath("p", p.id)}">${p.id}</a></td>
<td class="num">${p.files}</td>
<td class="num"><a href="${webPath("p", p.id, "commits")}">${p.version}</a></td>
<td>${timeTag(p.updated)}</td>
<td><a href="${webPath("p", p.id, "sessions")}">sessions</a></td>
</tr>`,
  );
  const table =
    projects.length === 0
      ? html`<p class="muted">No project yet: <code>uspark projects create ID</code>, a watch or push with <code>--create</code>, or the admin&#39;s form below.</p>`
      : html`<table><thead><tr><th>Project</th><th class="num">Files</th><th class="num">Version</th><th>Last change</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>`;
  const body = html`${table}${isAdmin(visit.principal) ? createForm(visit, error) : ""}`;
  sendPage(visit.res, error ? 400 : 200, page({ title: "Projects", session: visit.session, body }));
}

function createForm(visit: Visit, error: string | undefined) {
  return html`<h2>New project</h2>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="/" class="card">
${csrfField(visit.session)}
<label for="project-id">Project id</label>
<input id="project-id" name="id" required>
<button type="submit">Create</button>
</form>`;
}

export async function createProjectFromForm(visit: Visit, ctx: WebContext, form: URLSearchParams): Promise<void> {
  const id = form.get("id") ?? "";
  const bad = validateProjectId(id);
  if (bad) return projectsPage(visit, ctx, bad);
  if (!(await ctx.store.createProject(id))) throw new HttpError(409, "exists", `project ${JSON.stringify(id)} exists already`);
  redirect(visit.res, webPath("p", id));
}
