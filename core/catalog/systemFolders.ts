/**
 * The system's own top-level folders, the kernel's and the volatile ones: neither a node home nor a machine's backup
 * repository may be one of them or inside one (core/catalog/remote.ts, core/catalog/backups.ts add their own).
 */
export const SYSTEM_TOP_FOLDERS = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/lost+found',
  '/proc',
  '/run',
  '/sbin',
  '/snap',
  '/sys',
  '/tmp',
  '/usr',
] as const;
