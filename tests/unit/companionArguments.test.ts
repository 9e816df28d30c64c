/**
 * How a companion run from its image is named and started: the image pinned by its digest, and its arguments on a
 * systemd command line, where `%` and `$` would otherwise be read as specifiers and variables.
 */
import { pinnedImage } from '../../core/node/companions';
import { systemdArgument } from '../../core/remote/companionService';
import { itAnswers } from '../../testing/answers';

const DIGEST = `sha256:${'ab'.repeat(32)}`;

describe('pinnedImage', () => {
  itAnswers('%s with a digest is %s', (image: string) => pinnedImage(image, DIGEST), [
    ['docker.io/alethio/ethstats-cli:latest', `docker.io/alethio/ethstats-cli@${DIGEST}`],
    ['docker.io/alethio/ethstats-cli', `docker.io/alethio/ethstats-cli@${DIGEST}`],
    ['10.231.41.1:5000/lacchain/ethstats-cli', `10.231.41.1:5000/lacchain/ethstats-cli@${DIGEST}`],
    [`registry.example.org/ethstats:2.5.3@sha256:${'cd'.repeat(32)}`, `registry.example.org/ethstats@${DIGEST}`],
  ]);

  it('leaves an image without a digest as it is', () => {
    expect(pinnedImage('docker.io/alethio/ethstats-cli:latest', undefined)).toBe(
      'docker.io/alethio/ethstats-cli:latest',
    );
  });
});

describe('systemdArgument', () => {
  itAnswers('%s is written %s', systemdArgument, [
    ['ops@example.org', 'ops@example.org'],
    ['http://34.138.63.51:3000', 'http://34.138.63.51:3000'],
    ['100%-ops@example.org', '100%%-ops@example.org'],
    ['$ops@example.org', '$$ops@example.org'],
    ["o'brien@example.org", '"o\'brien@example.org"'],
    ['a "b"', '"a \\"b\\""'],
    ['back\\slash', '"back\\\\slash"'],
  ]);
});
