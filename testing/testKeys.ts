/**
 * openssl's arguments for a new key of a test certificate (the test clusters', their workers' and proxies', the test
 * hosts' release server's): ECDSA on P-256, which the API server, the kubelet, kubectl, curl and podman take as they
 * take RSA. An RSA key took about 0.2 s of a core to make, some hundred times a run; this one takes a few milliseconds.
 */
export const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
