/**
 * The first `pulumi up` of a move into the cluster (`npm run node -- move --to-kubernetes`, docs/moving.md): with
 * LACCHAIN_MOVE_HOLD_NODE naming a node, that node's StatefulSet is declared with no pod (replicas 0), so the move
 * fills its new data volume before the pod's first start; every other node, and every other run, as the stack says.
 */
import { MOVE_HOLD_VARIABLE } from '../../core/catalog/move';
import { declareProgram, inputsOf } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { kubernetesStack } from '../../testing/values';

const recorded = recordProgram();
const { config, files } = kubernetesStack('testnet');
const replicas = async (held?: string) => {
  if (held) process.env[MOVE_HOLD_VARIABLE] = held;
  try {
    const declared = await declareProgram(recorded, 'testnet', config, files);
    const sets = declared.resources.filter((r) => r.type === 'kubernetes:apps/v1:StatefulSet');
    return Object.fromEntries(sets.map((r) => [r.name, inputsOf(declared, r.type, r.name).spec.replicas as number]));
  } finally {
    delete process.env[MOVE_HOLD_VARIABLE];
  }
};

describe("a move's first pulumi up into the cluster", () => {
  it('declares the moving node with no pod, and every other node with its pod', async () => {
    const held = await replicas('writer');
    expect(held['writer-node']).toBe(0);
    const others = Object.entries(held).filter(([name]) => name !== 'writer-node');
    expect(others.length).toBeGreaterThan(0);
    for (const [, count] of others) expect(count).toBe(1);
  });

  it("without it (the move's second run, and any other), every node has its pod", async () => {
    const all = await replicas();
    expect(Object.values(all).every((count) => count === 1)).toBe(true);
  });
});
