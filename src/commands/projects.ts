import { resolveServer, UsageError } from "../config/config.js";
import { EXIT } from "../util/exit-codes.js";
import type { Reporter } from "../report/reporter.js";
import type { EventAt } from "../report/events.js";
import { errorText } from "../errors/text.js";
import { ApiClient, ApiError } from "../transfer/client.js";
import { listProjects } from "../transfer/projects.js";
import { validateProjectId } from "../api/validate.js";
import { rememberedProject } from "../reconcile/state-store.js";
import { findRoot } from "../reconcile/root.js";
import type { Command } from "./kit/commander.js";
import { homeConfig, rememberChoice, reporterFor } from "./kit/connection.js";
import { exit, usageFailure } from "./kit/exit.js";
import { addFlags, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { logFlags, serverOnlyFlags } from "./kit/flags.js";

// `uspark projects` and `uspark projects create <id>`: the server's projects.

const PROJECTS_HELP = `
A project exists once it is created: a push, pull or watch of an id the server does not know is an
error (exit 2) that names the closest known ids, unless --create is given. (Servers older than API
1.2 create a project on its first commit, and cannot list them.)

Examples:
  $ uspark projects                                  # id, version, files, last change
  $ uspark projects create my-app
  $ uspark push --project-id my-app --create         # create it if need be, then push`;

/** projects create's flags: the server's and the log's. */
const projectsCreateFlags = { ...serverOnlyFlags, ...logFlags };

/** projects' flags: its own, then create's. */
const projectsFlags = { json: switchFlag("--json", "one JSON object instead of a table"), ...projectsCreateFlags };

export type ProjectsFlags = FlagValues<typeof projectsFlags>;

/** `projects` and `projects create`. */
export function addProjectsCommands(program: Command): void {
  const projects = addFlags(program.command("projects").description("list the projects the token can see (on stdout)"), projectsFlags)
    .addHelpText("after", PROJECTS_HELP)
    .action((flags: ProjectsFlags) => runProjectsCommand(flags));
  addFlags(
    projects.command("create").description("create a project on the server").argument("<id>", "the new project's id"),
    projectsCreateFlags,
  )
    .addHelpText("after", PROJECTS_HELP)
    // The parent's connection flags are read wherever they stand (`projects create x --api-url …`).
    .action((id: string, _flags: unknown, command: Command) => runProjectsCreateCommand(id, command.optsWithGlobals<ProjectsFlags>()));
}

/** `uspark projects`: needs no project id; the list goes to stdout. */
export async function runProjectsCommand(flags: ProjectsFlags): Promise<void> {
  await withClient(flags, "projects", async (client, report) =>
    listProjects(client, process.stdout, flags.json === true, (line) => report.info("projects", line)),
  );
}

/** `uspark projects create <id>`: exit 0 when made, 1 when it already exists. */
export async function runProjectsCreateCommand(id: string, flags: ProjectsFlags): Promise<void> {
  const badId = validateProjectId(id);
  if (badId) return usageFailure(reporterFor(flags), new UsageError(`project id ${JSON.stringify(id)}: ${badId}`));
  await withClient({ ...flags, projectId: id }, "projects", async (client, report) => {
    const outcome = await client.createProject(id);
    if (outcome === "exists") {
      report.error("project", `project ${id} already exists`, { projectId: id });
      return EXIT.notSynced;
    }
    report.info("project", `created project ${id}`, { projectId: id });
    return EXIT.ok;
  });
}

/** A client for the project routes (no project id needed), closed after `work`; its failures said plainly. */
async function withClient(
  flags: ProjectsFlags,
  what: EventAt<"error">,
  work: (client: ApiClient, report: Reporter) => Promise<number | void>,
): Promise<void> {
  let client: ApiClient;
  let report = reporterFor(flags);
  try {
    const home = homeConfig(report);
    const server = resolveServer(flags, process.env, home, await rememberedProject(findRoot(process.cwd(), process.env.HOME)));
    rememberChoice(flags, server.apiUrl, home, report);
    report = reporterFor(flags, server.token);
    client = new ApiClient({ ...server, projectId: flags.projectId ?? "", requestTimeoutMs: 30_000 });
  } catch (error) {
    return usageFailure(report, error);
  }
  try {
    exit((await work(client, report)) ?? EXIT.ok);
  } catch (error) {
    const unsupported = error instanceof ApiError && error.code === "unsupported";
    report.error(
      what,
      unsupported
        ? "this server does not list or create projects (it speaks an API older than 1.2; it creates a project on its first commit)"
        : errorText(error),
    );
    exit(unsupported ? EXIT.usage : EXIT.notSynced);
  } finally {
    await client.close();
  }
}
