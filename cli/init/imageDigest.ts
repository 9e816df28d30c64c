/**
 * The monitoring client's image digest, read by `npm run init` on the operator's machine at their request: a machine
 * pulls that image by its registry digest, nobody publishes one, and podman or docker here can read it (the image
 * inspected, pulled first when it is not here). Mainnet requires the digest; a test network's machine runs the tag
 * without it, which the policy flags.
 */
import { spawnSync } from 'child_process';
import { CONFIG_NAMESPACE } from '../../core/catalog/defaults';
import { ETHSTATS } from '../../core/catalog/companions';
import { ETHSTATS_KEY } from '../../core/settings/companions';
import type { Network } from '../../core/catalog/networks';
import { UsageError } from '../cli';
import { Asker, yesNo } from './asker';
import { stackFileSetting } from './settingsFiles';

/** The container tools init may read a digest with, in the order it looks for them. */
const CONTAINER_TOOLS = ['podman', 'docker'] as const;
/** One of them. */
type ContainerTool = (typeof CONTAINER_TOOLS)[number];

/** The setting init writes, as `pulumi config set --path` names it. */
export const ETHSTATS_DIGEST_SETTING = [`${CONFIG_NAMESPACE}:companions`, ETHSTATS_KEY, 'imageDigest'];

/** A registry digest as the settings take it. */
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** How long a pull may take (the image is about 300 MB). */
const PULL_TIMEOUT_MS = 10 * 60_000;
/** How long a look at the local store may take. */
const INSPECT_TIMEOUT_MS = 30_000;

/**
 * The monitoring client's image when the stack file runs it without a digest (init may read one), or undefined: it is
 * turned off, or its digest is there already.
 */
export function imageWithoutDigest(stackText: string | undefined, file: string): string | undefined {
  const ethstats = stackFileSetting(stackText, file, ETHSTATS_DIGEST_SETTING.slice(0, 2)) as
    { enabled?: unknown; image?: unknown; imageDigest?: unknown } | undefined;
  if (ethstats?.enabled === false || ethstats?.enabled === 'false' || ethstats?.imageDigest !== undefined) {
    return undefined;
  }
  return typeof ethstats?.image === 'string' ? ethstats.image : ETHSTATS.defaultImage;
}

/** The first container tool that runs here (its `--version` answers), or undefined. */
export function containerToolAtHand(): ContainerTool | undefined {
  return CONTAINER_TOOLS.find(
    (tool) => spawnSync(tool, ['--version'], { stdio: 'ignore', timeout: INSPECT_TIMEOUT_MS }).status === 0,
  );
}

/** An image's repository as registries name it: no tag or digest, Docker Hub's `docker.io/` and `library/` left out. */
function repositoryOf(image: string): string {
  const name = image.split('@')[0];
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const repository = colon > slash ? name.slice(0, colon) : name;
  return repository.replace(/^(docker\.io|index\.docker\.io)\//, '').replace(/^library\//, '');
}

/** The digest of `image` among an image's RepoDigests (`<repository>@sha256:…`), or undefined. */
function digestAmong(repoDigests: unknown, image: string): string | undefined {
  if (!Array.isArray(repoDigests)) return undefined;
  const wanted = repositoryOf(image);
  for (const entry of repoDigests) {
    if (typeof entry !== 'string') continue;
    const [repository, digest] = entry.split('@');
    if (repositoryOf(repository) === wanted && DIGEST.test(digest ?? '')) return digest;
  }
  return undefined;
}

/** The image's RepoDigests in the tool's local store, or why they cannot be read. */
function inspect(tool: ContainerTool, image: string): { repoDigests: unknown } | { reason: string } {
  const result = spawnSync(tool, ['image', 'inspect', '--format', '{{json .RepoDigests}}', image], {
    encoding: 'utf8',
    timeout: INSPECT_TIMEOUT_MS,
  });
  if (result.error || result.status !== 0) return { reason: lastLine(result.stderr, result.error) };
  try {
    return { repoDigests: JSON.parse(result.stdout) };
  } catch {
    return { reason: `${tool} image inspect printed no list of digests` };
  }
}

/** The last line a tool printed on its error output, cut short, or its spawn error. */
function lastLine(stderr: string | undefined, error: Error | undefined): string {
  return (error?.message ?? stderr?.trim().split('\n').pop() ?? 'no answer').slice(0, 200);
}

/**
 * The registry digest of `image`, read with `tool`: from its local store, or pulled first (`say` tells the operator
 * what runs); or why it could not be read.
 */
export function readImageDigest(
  tool: ContainerTool,
  image: string,
  say: (line: string) => void,
): { digest: string } | { reason: string } {
  let found = inspect(tool, image);
  if (!('repoDigests' in found) || digestAmong(found.repoDigests, image) === undefined) {
    say(`${tool} pull ${image}`);
    const pulled = spawnSync(tool, ['pull', image], { encoding: 'utf8', timeout: PULL_TIMEOUT_MS });
    if (pulled.error || pulled.status !== 0) {
      return { reason: `${tool} pull ${image} failed: ${lastLine(pulled.stderr, pulled.error)}` };
    }
    found = inspect(tool, image);
  }
  if (!('repoDigests' in found)) return found;
  const digest = digestAmong(found.repoDigests, image);
  return digest ? { digest } : { reason: `${tool} shows no registry digest of ${repositoryOf(image)}` };
}

/**
 * The monitoring client's image digest, read here with podman or docker when the operator wants it (asked on a
 * terminal when one runs here; --read-image-digest yes without one), for an SSH node of a stack that runs the client
 * without a digest; undefined when not read (mainnet's still-to-do list then asks for it).
 */
export async function askImageDigest(
  asker: Asker,
  target: 'kubernetes' | 'ssh',
  network: Network,
  stackText: string | undefined,
  stackFileName: string,
  flags: Record<string, string | undefined>,
): Promise<string | undefined> {
  const flag = 'read-image-digest';
  const given = flags[flag];
  const checked = given === undefined ? undefined : yesNo(false)(given);
  if (checked && !checked.ok) throw new UsageError(`--${flag}: ${checked.problem}`);
  const fromFlag = checked?.ok ? checked.value : undefined;
  if (target === 'kubernetes') return undefined;
  const image = imageWithoutDigest(stackText, stackFileName);
  if (image === undefined || fromFlag === false || (fromFlag === undefined && !asker.interactive)) return undefined;
  const tool = containerToolAtHand();
  if (tool === undefined) {
    if (fromFlag === true) {
      throw new UsageError(
        `--${flag}: given yes, but neither podman nor docker runs here; allowed: no (the digest is then on the list), or a machine where one runs`,
      );
    }
    return undefined;
  }
  const why = network.allowsUnpinnedKeyImages
    ? `${network.name} runs the tag without it, flagged`
    : `${network.name} requires it`;
  const wanted =
    fromFlag ??
    (await asker.typed(
      `The monitoring client's image ${image} has no digest pinned (${why}): read it with ${tool} now (${tool} image inspect, pulled first when not here)? [Y/n]`,
      yesNo(true),
    ));
  if (!wanted) return undefined;
  const read = readImageDigest(tool, image, (line) => process.stdout.write(`${line}\n`));
  if ('reason' in read) {
    process.stdout.write(`imageDigest: not read (${read.reason})\n`);
    return undefined;
  }
  process.stdout.write(`imageDigest: ${read.digest} (${image}, read with ${tool})\n`);
  return read.digest;
}
