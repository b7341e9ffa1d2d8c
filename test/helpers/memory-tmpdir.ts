import { existsSync } from "node:fs";
import { tmpdir } from "node:os";

/**
 * A memory file system (tmpfs) where the machine has one, else the temp dir: for the data of a
 * server whose files a test does not look at. Making and removing a data dir's 256 fan-out
 * directories and its fsyncs cost ~110 ms of CPU a server on the disk, ~27 ms there.
 */
export const MEMORY_TMPDIR = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
