// `GET /files` of docs/api.md: a project's listing, now or as of a version.

import type { IncomingMessage, ServerResponse } from "node:http";
import { API_ERRORS, API_VERSION, type Listing } from "../../api/types.js";
import type { ProjectAccess } from "../access.js";
import { HttpError, sendJson } from "../http.js";
import { queryVersion } from "./table.js";

/** `GET /files[?version=N]`: the listing now or as of version N, saying the API version it speaks. */
export async function getFiles(req: IncomingMessage, res: ServerResponse, project: ProjectAccess): Promise<void> {
  const version = queryVersion(req.url ?? "");
  const listing = await project.files(version);
  if (!listing) {
    throw new HttpError(404, API_ERRORS.versionNotFound, `version ${version} is past the project's head`);
  }
  const answer: Listing = { ...listing, api: API_VERSION };
  sendJson(res, 200, answer);
}
