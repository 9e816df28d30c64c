/**
 * A stand-in for the Pulumi engine's gRPC side, for running the program as `pulumi up` runs it (run.ts): it serves the
 * resource monitor and the engine services that `@pulumi/pulumi/cmd/run` connects to, answers every registration at
 * once (outputs = inputs, plus the random bytes a generated key needs) and records when each arrived. It does no
 * engine work (no state, no diff, no provider), so what it times is the program's own cost: Node start, the SDK,
 * ts-node, the modules the stack loads, validation and declaration.
 */
import * as grpc from '@grpc/grpc-js';
import { createHash } from 'crypto';

/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any */
const resourceGrpc = require('@pulumi/pulumi/proto/resource_grpc_pb.js');
const engineGrpc = require('@pulumi/pulumi/proto/engine_grpc_pb.js');
const structProto = require('google-protobuf/google/protobuf/struct_pb.js');

/** What the stand-in saw of one program run. */
export interface EngineRun {
  /** Registered resources, in order, with the time (ms since `start`) each arrived. */
  resources: { type: string; name: string; atMs: number }[];
  /** When the stack's outputs were registered: the program had declared everything (ms since `start`). */
  doneMs?: number;
  /** The stack's outputs, as registered (secrets in the engine's wire form). */
  outputs?: Record<string, unknown>;
  /** Errors the program logged through the engine. */
  errors: string[];
  /** When the first of them arrived (ms since `start`). */
  firstErrorMs?: number;
}

/** A running stand-in: its address, the run it records, and stop. */
export interface EngineStandIn {
  address: string;
  run: EngineRun;
  /** Marks the start of a run (resets the record). */
  start(): void;
  /** Resolves when the stack's outputs arrive (or the program logs an error). */
  finished: () => Promise<EngineRun>;
  stop(): Promise<void>;
}

const FEATURES = new Set(['secrets', 'resourceReferences']);

/** Starts the stand-in on 127.0.0.1 (an ephemeral port). */
export async function startEngineStandIn(): Promise<EngineStandIn> {
  const server = new grpc.Server();
  let startedAt = Date.now();
  let run: EngineRun = { resources: [], errors: [] };
  let root = '';
  let notify: (() => void) | undefined;
  const done = () => notify?.();
  const answer = (service: Record<string, any>, special: Record<string, (request: any) => any>) =>
    Object.fromEntries(
      Object.entries(service).map(([method, definition]) => [
        method,
        (call: any, callback: any) => {
          try {
            const handler = special[method];
            callback(null, handler ? handler(call.request) : new definition.responseType());
          } catch (error) {
            callback(error);
          }
        },
      ]),
    );
  const monitor = answer(resourceGrpc.ResourceMonitorService, {
    supportsFeature(request) {
      const response = new resourceGrpc.ResourceMonitorService.supportsFeature.responseType();
      response.setHassupport(FEATURES.has(request.getId()));
      return response;
    },
    registerResource(request) {
      const type: string = request.getType();
      const name: string = request.getName();
      run.resources.push({ type, name, atMs: Date.now() - startedAt });
      const response = new resourceGrpc.ResourceMonitorService.registerResource.responseType();
      const urn = `urn:pulumi:stack::project::${type}::${name}`;
      response.setUrn(urn);
      if (type === 'pulumi:pulumi:Stack') root = urn;
      if (request.getCustom()) response.setId(`${name}-id`);
      const inputs = request.getObject()?.toJavaScript() ?? {};
      if (type === 'random:index/randomBytes:RandomBytes') {
        const hex = createHash('sha256').update(name).digest('hex');
        Object.assign(inputs, { hex, base64: Buffer.from(hex, 'hex').toString('base64') });
      }
      response.setObject(structProto.Struct.fromJavaScript(inputs));
      return response;
    },
    registerResourceOutputs(request) {
      if (request.getUrn() === root) {
        run.doneMs = Date.now() - startedAt;
        run.outputs = request.getOutputs()?.toJavaScript() ?? {};
        done();
      }
      return new resourceGrpc.ResourceMonitorService.registerResourceOutputs.responseType();
    },
  });
  const engine = answer(engineGrpc.EngineService, {
    log(request) {
      // Severity 3 is ERROR in pulumirpc.LogSeverity.
      if (request.getSeverity() === 3) {
        run.firstErrorMs ??= Date.now() - startedAt;
        run.errors.push(request.getMessage());
        done();
      }
      return new engineGrpc.EngineService.log.responseType();
    },
    getRootResource() {
      const response = new engineGrpc.EngineService.getRootResource.responseType();
      response.setUrn(root);
      return response;
    },
    setRootResource(request) {
      root = request.getUrn();
      return new engineGrpc.EngineService.setRootResource.responseType();
    },
  });
  server.addService(resourceGrpc.ResourceMonitorService, monitor);
  server.addService(engineGrpc.EngineService, engine);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    get run() {
      return run;
    },
    start() {
      startedAt = Date.now();
      run = { resources: [], errors: [] };
      root = '';
    },
    finished: () =>
      new Promise<EngineRun>((resolve) => {
        if (run.doneMs !== undefined || run.errors.length > 0) resolve(run);
        else notify = () => resolve(run);
      }),
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
