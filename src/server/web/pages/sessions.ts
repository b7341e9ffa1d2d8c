// /p/{id}/sessions: the project's sessions (transcripts) and their commits. /p/{id}/sessions/{sid}:
// a transcript read as a conversation, SESSION_PAGE_BYTES a page by byte offset (a 200 MiB one is
// never read whole): the prompts, the agent's text (escaped, never interpreted), its tool calls
// with the files each changed, and links to the session's commits. Its last page lives.

import { createConversationReader, type ConversationReader, type Step } from "../../../agents/conversation/index.js";
import type { ProjectAccess } from "../../access.js";
import { plural } from "../../../report/reporter.js";
import { HttpError } from "../../http.js";
import type { SessionInfo, StoredBytes } from "../../store.js";
import { readPage } from "../byte-pages.js";
import type { Visit, WebContext } from "../context.js";
import { html, webPath, withQuery, type Html } from "../html.js";
import { formatSize, page, sendPage } from "../layout.js";
import type { CommitSummary, ProjectIndex } from "../project-index.js";
import { timeTag } from "../when.js";
import { lastCommitOf, outcomeWords, projectPath, transcriptHead, withoutRoot } from "./session-facts.js";
import { intParam, liveUrl, pager, projectCrumbs, projectTabs } from "./project-nav.js";

export const SESSION_PAGE_BYTES = 512 * 1024;
/** Sessions listed a page: a CI loop makes one a run. */
export const SESSIONS_PAGE = 100;
/** The head of a transcript its format is told from (a page in its middle may hold no telling event). */
const FORMAT_HEAD_BYTES = 256 * 1024;
/** The head of each listed session read for its first prompt (100 a page). */
const LIST_HEAD_BYTES = 32 * 1024;
/** A prompt's characters shown on the list. */
const PROMPT_CHARS = 140;

export async function sessionsPage(visit: Visit, ctx: WebContext, project: ProjectAccess): Promise<void> {
  const { projectId } = project;
  const [sessions, index] = await Promise.all([project.sessions(), ctx.indexes.current(project)]);
  const transcripts = new Map(sessions.map((s) => [s.id, s]));
  const ids = new Set([...transcripts.keys(), ...index.commitsBySession.keys()]);
  const listed = [...ids].map((id) => {
    const commits = index.commitsBySession.get(id) ?? [];
    const transcript = transcripts.get(id);
    // ISO times in UTC compare as strings.
    const active = [commits.at(-1)?.time ?? "", transcript?.updated ?? ""].sort().at(-1)!;
    return { id, commits, transcript, active };
  });
  // Latest activity first: the running session on top.
  listed.sort((a, b) => (a.active === b.active ? (a.id < b.id ? -1 : 1) : a.active > b.active ? -1 : 1));
  const pages = Math.max(1, Math.ceil(listed.length / SESSIONS_PAGE));
  const pageNo = Math.min(intParam(visit.url, "page", 1) || 1, pages);
  const here = (n: number) => withQuery(webPath("p", projectId, "sessions"), { page: n > 1 ? n : undefined });
  const shown = listed.slice((pageNo - 1) * SESSIONS_PAGE, pageNo * SESSIONS_PAGE);
  const heads = await Promise.all(
    shown.map(async ({ id, transcript }) => {
      const stored = transcript && (await project.readEvents(id));
      return stored ? transcriptHead(stored, LIST_HEAD_BYTES) : undefined;
    }),
  );
  const rows = shown.map((s, i) => sessionRow(projectId, s, heads[i]?.prompt));
  const body = html`${projectTabs(projectId)}
${
  ids.size === 0
    ? html`<p class="muted">No sessions yet.</p>`
    : html`<p class="muted">${plural(ids.size, "session")}${pages > 1 ? html` · page ${pageNo} of ${pages}` : ""}</p><table>
<thead><tr><th>Session</th><th>Machine</th><th>Agent</th><th class="num">Transcript</th><th class="num">Commits</th><th>Started</th><th>Last activity</th></tr></thead>
<tbody>${rows}</tbody></table>
${pager([
  ["← newer", pageNo > 1 ? here(pageNo - 1) : undefined],
  ["older →", pageNo < pages ? here(pageNo + 1) : undefined],
])}`
}`;
  const crumbs = projectCrumbs(projectId, ["sessions", webPath("p", projectId, "sessions")]);
  sendPage(
    visit.res,
    200,
    page({ title: `Sessions of ${projectId}`, session: visit.session, crumbs, live: liveUrl(projectId, index.version), body }),
  );
}

function sessionRow(projectId: string, { id, commits, transcript, active }: ListedSession, prompt: string | undefined): Html {
  const href = webPath("p", projectId, "sessions", id);
  const title = prompt
    ? html`<a href="${href}" class="prompt-line">${cut(prompt, PROMPT_CHARS)}</a><br><code class="muted">${id}</code>`
    : html`<a href="${href}"><code>${id}</code></a>`;
  return html`<tr><td>${title}</td><td>${commits.at(-1)?.host ?? ""}</td><td>${commits.at(-1)?.agent ?? ""}</td>
<td class="num">${transcript ? formatSize(transcript.length) : html`<span class="muted">no transcript</span>`}</td>
<td class="num">${commits.length}</td><td>${timeTag(commits[0]?.time)}</td><td>${timeTag(active)}</td></tr>`;
}

interface ListedSession {
  id: string;
  commits: CommitSummary[];
  transcript: SessionInfo | undefined;
  active: string;
}

/** `text` on one line, at most `max` characters. */
function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export async function sessionPage(visit: Visit, ctx: WebContext, project: ProjectAccess, sessionId: string): Promise<void> {
  const { projectId } = project;
  const [transcript, index, infos] = await Promise.all([project.readEvents(sessionId), ctx.indexes.current(project), project.sessions()]);
  const commits = index.commitsBySession.get(sessionId) ?? [];
  if (!transcript && commits.length === 0) throw new HttpError(404, "not_found", `no session ${JSON.stringify(sessionId)} in ${projectId}`);
  const href = webPath("p", projectId, "sessions", sessionId);
  const conversation = transcript ? await conversationPage(visit.url, projectId, index, commits, transcript, href) : undefined;
  const body = html`${projectTabs(projectId)}
${sessionByline(commits, infos.find((info) => info.id === sessionId)?.updated)}
${commitLinks(projectId, commits)}
${conversation?.body ?? html`<p class="muted">No transcript was uploaded for this session.</p>`}`;
  const crumbs = projectCrumbs(projectId, ["sessions", webPath("p", projectId, "sessions")], [sessionId, href]);
  // Only the last page grows as the agent goes on.
  const live = conversation?.last ? liveUrl(projectId, index.version, { id: sessionId, length: transcript!.size }) : undefined;
  sendPage(visit.res, 200, page({ title: `Session ${sessionId}`, session: visit.session, crumbs, live, body }));
}

/** When the session started (its first commit) and was last active, from which machine and agent. */
function sessionByline(commits: readonly CommitSummary[], appended: string | undefined): Html {
  const last = commits.at(-1);
  const active = [last?.time ?? "", appended ?? ""].sort().at(-1);
  return html`<p class="byline">${commits[0] ? html`started ${timeTag(commits[0].time)} · ` : ""}last active ${timeTag(active)}${last?.host ? html` · on <strong class="host">${last.host}</strong>` : ""}${
    last?.agent ? html` · by <strong>${last.agent}</strong>` : ""
  }</p>`;
}

function commitLinks(projectId: string, commits: readonly CommitSummary[]): Html {
  if (commits.length === 0) return html`<p class="muted">No commits from this session.</p>`;
  const links = commits.map((c) => html` <a href="${webPath("p", projectId, "commits", String(c.version))}">v${c.version}</a>`);
  return html`<p>Commits of this session:${links}</p>`;
}

/** What a step's file links need: the project's files now, the session's commits, the agent's directory. */
interface LinkFacts {
  projectId: string;
  index: ProjectIndex;
  commits: readonly CommitSummary[];
  cwd: string | undefined;
}

async function conversationPage(
  url: URL,
  projectId: string,
  index: ProjectIndex,
  commits: readonly CommitSummary[],
  transcript: StoredBytes,
  href: string,
) {
  const from = intParam(url, "from", 0);
  const exact = url.searchParams.get("exact") === "1";
  const { start, bytes, next } = await readPage(transcript, from, SESSION_PAGE_BYTES, !exact);
  const head = await transcriptHead(transcript, FORMAT_HEAD_BYTES);
  const reader = createConversationReader(head.format);
  const facts: LinkFacts = { projectId, index, commits, cwd: head.cwd };
  const steps = mergedSteps(reader, bytes);
  const lastStart = Math.max(0, transcript.size - SESSION_PAGE_BYTES);
  const nav = pager([
    ["first", start > 0 ? href : undefined],
    ["next →", next !== undefined ? withQuery(href, { from: next, exact: 1 }) : undefined],
    ["last", next !== undefined ? withQuery(href, { from: lastStart }) : undefined],
  ]);
  const where = html`<p class="muted">${reader.format ?? "unknown format"} · bytes ${start}-${start + bytes.length} of ${transcript.size}</p>`;
  const body = html`${where}${nav}${steps.length === 0 ? html`<p class="muted">Nothing to show on this page.</p>` : steps.map((s) => stepView(facts, s))}${nav}`;
  return { body, last: next === undefined };
}

/** The page's steps in stream order; a tool call reported again (its result) replaces its start in place. */
function mergedSteps(reader: ConversationReader, bytes: Buffer): Step[] {
  const steps: Step[] = [];
  const toolAt = new Map<string, number>();
  const add = (step: Step) => {
    const at = step.kind === "tool" ? toolAt.get(step.id) : undefined;
    if (at !== undefined) return void (steps[at] = step);
    if (step.kind === "tool") toolAt.set(step.id, steps.length);
    steps.push(step);
  };
  for (const line of bytes.toString("utf8").split("\n")) if (line !== "") reader.line(line).forEach(add);
  reader.end().forEach(add);
  return steps;
}

function stepView(facts: LinkFacts, step: Step): Html {
  switch (step.kind) {
    case "prompt":
      return html`<section class="step prompt"><h3>Prompt</h3><p>${step.text}</p></section>`;
    case "text":
      return html`<section class="step text"><h3>Agent</h3><p>${step.text}</p></section>`;
    case "result":
      return html`<section class="step result${step.ok ? "" : " failed"}"><h3>${step.ok ? "Result" : "Failed"}</h3><p>${outcomeWords(step.text)}</p></section>`;
    case "tool": {
      const files = step.files.map((path) => html`<li>${fileLink(facts, path)}</li>`);
      return html`<section class="step tool${step.status === "failed" ? " failed" : ""}">
<h3>${step.name} <span class="muted">${TOOL_STATUS[step.status]}</span></h3>
${step.summary ? html`<p><code>${withoutRoot(step.summary, facts.cwd)}</code></p>` : ""}
${files.length > 0 ? html`<ul>${files}</ul>` : ""}
${step.error ? html`<p class="error">${step.error}</p>` : ""}
</section>`;
    }
  }
}

const TOOL_STATUS: Readonly<Record<Extract<Step, { kind: "tool" }>["status"], string>> = {
  running: "running",
  ok: "done",
  failed: "failed",
};

/**
 * A changed path as a project path, linked to the file as the session's last commit of it left it
 * (else as it is now); a path outside the project stays as the agent wrote it.
 */
function fileLink({ projectId, index, commits, cwd }: LinkFacts, written: string): Html {
  const path = projectPath(written, cwd, (p) => index.files.has(p));
  if (path === undefined) return html`<code>${written}</code>`;
  const commit = lastCommitOf(commits, path);
  if (!commit && !index.files.has(path)) return html`<code title="${written}">${path}</code>`;
  const href = webPath("p", projectId, "f", ...path.split("/"));
  const at = commit
    ? html` <a href="${webPath("p", projectId, "commits", String(commit.version))}" class="muted">v${commit.version}</a>`
    : "";
  return html`<a href="${commit ? withQuery(href, { at: commit.version }) : href}" title="${written}"><code>${path}</code></a>${at}`;
}
