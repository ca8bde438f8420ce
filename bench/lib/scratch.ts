/**
 * Where a benchmark keeps the chat's SQLite files, and which file system
 * that is. Headline figures come from a disk, where users keep the file
 * (`data/` in the checkout, a compose volume, a VM's disk): a commit there
 * waits for a real fsync. `tmpfs` (`/dev/shm`) is the second, labelled
 * row: it shows what the chat costs without the disk.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type DbPlace = 'disk' | 'tmpfs';

export interface Scratch {
  dir: string;
  place: DbPlace;
  /** As `stat -f` names it: `ext2/ext3` (ext4 too), `xfs`, `tmpfs`… */
  fileSystem: string;
}

/** The `--db` flag: `disk` unless it says `tmpfs`. */
export function dbPlace(value: string | undefined): DbPlace {
  if (value === undefined || value === 'disk') return 'disk';
  if (value === 'tmpfs') return 'tmpfs';
  throw new Error(`--db must be disk or tmpfs, got "${value}"`);
}

/** The file system type of `dir`, or `unknown` where `stat -f` does not say. */
export function fileSystemOf(dir: string): string {
  try {
    return execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/**
 * A fresh folder for SQLite files: on `disk`, inside the checkout's `data/`
 * (the file system the chat's own file is on; never tmpfs: a checkout on
 * tmpfs is refused, since its figures would not be a disk's); on `tmpfs`,
 * in /dev/shm.
 */
export function makeScratch(place: DbPlace, prefix: string): Scratch {
  let parent: string;
  if (place === 'tmpfs') {
    if (!existsSync('/dev/shm')) throw new Error('--db=tmpfs: this machine has no /dev/shm');
    parent = '/dev/shm';
  } else {
    parent = resolve(import.meta.dirname, '../../data');
    mkdirSync(parent, { recursive: true });
  }
  const dir = mkdtempSync(join(parent, `.${prefix}-`));
  const fileSystem = fileSystemOf(dir);
  if (place === 'disk' && fileSystem === 'tmpfs') {
    throw new Error(`${dir} is on tmpfs: the disk figures need a disk (or say --db=tmpfs)`);
  }
  return { dir, place, fileSystem };
}

/** `SQLite on disk (ext2/ext3, data/.chat-bench-x)`, for reports. */
export function describeScratch(scratch: Scratch): string {
  return `SQLite on ${scratch.place === 'disk' ? 'disk' : 'tmpfs'} (${scratch.fileSystem}, ${scratch.dir})`;
}
