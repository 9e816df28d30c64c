/**
 * The test cluster's keys and certificates, made with openssl: a CA, the API server's serving certificate (for
 * 127.0.0.1 and the `kubernetes` Service's cluster IP, which a pod's in-cluster client checks), an administrator's
 * client certificate (group system:masters) and the service-account signing key.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { apiServiceIP } from './serviceNetwork';
import { NEW_KEY } from '../testKeys';

/** The files made, by role. */
export interface ClusterCertificates {
  ca: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
}

/** The names the API server's certificate holds: the loopback its clients here use, and the `kubernetes` Service's. */
const SERVER_NAMES = ['IP:127.0.0.1', `IP:${apiServiceIP()}`, 'DNS:localhost', 'DNS:kubernetes.default.svc'];

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });

/** Makes every key and certificate in `dir`. */
export function makeCertificates(dir: string): ClusterCertificates {
  fs.mkdirSync(dir, { recursive: true });
  openssl(
    [
      'req',
      '-x509',
      ...NEW_KEY,
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      '/CN=lacchain-test-ca',
    ],
    dir,
  );
  const at = (file: string) => path.join(dir, file);
  const sign = (name: string, subject: string, extensions: string) =>
    signCertificate(dir, at('ca.crt'), at('ca.key'), name, subject, extensions);
  sign('server', '/CN=kube-apiserver', `subjectAltName=${SERVER_NAMES.join(',')}\nextendedKeyUsage=serverAuth\n`);
  sign('admin', '/CN=lacchain-test-admin/O=system:masters', 'extendedKeyUsage=clientAuth\n');
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'sa.key'], dir);
  openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return {
    ca: at('ca.crt'),
    caKey: at('ca.key'),
    serverCert: at('server.crt'),
    serverKey: at('server.key'),
    adminCert: at('admin.crt'),
    adminKey: at('admin.key'),
    serviceAccountKey: at('sa.key'),
    serviceAccountPublicKey: at('sa.pub'),
  };
}

/**
 * Signs a new key's certificate for `subject` (`/CN=system:node:worker/O=system:nodes`) with the CA `ca`/`caKey`,
 * with the extensions in `extensions` (openssl syntax), into `dir` as `<name>.crt` and `<name>.key`.
 */
export function signCertificate(
  dir: string,
  ca: string,
  caKey: string,
  name: string,
  subject: string,
  extensions: string,
): { cert: string; key: string } {
  openssl(['req', ...NEW_KEY, '-nodes', '-keyout', `${name}.key`, '-subj', subject, '-out', `${name}.csr`], dir);
  fs.writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      ca,
      '-CAkey',
      caKey,
      '-CAcreateserial',
      '-CAserial',
      `${name}.srl`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  return { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
}
