/**
 * The disk of a node's data: how much the data holds and how much room its filesystem has left, read on the node with
 * `du` and `df`, and judged against the thresholds of core/catalog/health.ts. Pure: text in, values out.
 */
import { DISK_FREE } from '../catalog/health';
import { bytesText } from './units';

/** The data's size and its filesystem's free space and size, in bytes. */
export interface DiskUsage {
  dataBytes: number;
  availableBytes: number;
  sizeBytes: number;
}

/** The shell command that prints the data folder's size, then its filesystem's free space and size (GNU coreutils). */
export function diskUsageCommand(dataDir: string): string {
  return `du -sb ${dataDir} | cut -f1; df -B1 --output=avail,size ${dataDir} | tail -n 1`;
}

/** What diskUsageCommand printed, or undefined when it is not that. */
export function parseDiskUsage(text: string): DiskUsage | undefined {
  const match = /^\s*(\d+)\s*\n\s*(\d+)\s+(\d+)\s*$/.exec(text);
  if (!match) return undefined;
  const [dataBytes, availableBytes, sizeBytes] = match.slice(1).map(Number);
  return sizeBytes > 0 ? { dataBytes, availableBytes, sizeBytes } : undefined;
}

/** The share of the filesystem that is free. */
export function freeShare(disk: DiskUsage): number {
  return disk.availableBytes / disk.sizeBytes;
}

/** The disk in words: the data's size, the free space and its share, and whether it is low. */
export function diskText(disk: DiskUsage): string {
  const share = freeShare(disk);
  const level =
    share < DISK_FREE.critical
      ? `: below the critical ${DISK_FREE.critical * 100} %, a full disk can corrupt Besu's database`
      : share < DISK_FREE.warning
        ? `: below ${DISK_FREE.warning * 100} %, low`
        : '';
  return (
    `data ${bytesText(disk.dataBytes)}; ${bytesText(disk.availableBytes)} free of ${bytesText(disk.sizeBytes)}` +
    ` (${Math.floor(share * 100)} %)${level}`
  );
}
