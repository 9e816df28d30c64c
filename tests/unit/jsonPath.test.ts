/**
 * The harness's JSONPath printer (testing/cluster/jsonPath.ts) prints what kubectl prints: each expected text below is
 * kubectl v1.36.3's own output for the template on this object (`kubectl label --local -f object.json nothere- -o
 * jsonpath=<template>`), so the test cluster's waits read over HTTPS see the values they saw through kubectl.
 */
import { jsonPathText, TemplateError, UnsupportedTemplate } from '../../testing/cluster/jsonPath';

const OBJECT = {
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: {
    name: 'n',
    uid: 'u-1',
    labels: { z: '1', a: 'x<y&z' },
    annotations: { 'lacchain.net/config-checksum': 'abc' },
  },
  spec: {
    replicas: 3,
    paused: false,
    gone: null,
    empty: [],
    containers: [
      { name: 'besu', ready: true, restartCount: 2, state: { running: { startedAt: 'T1' } } },
      { name: 'nginx', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } },
    ],
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Failed', status: 'False' },
    ],
  },
};

describe("kubectl's -o jsonpath, printed from an object read over HTTPS", () => {
  it.each([
    ['{.metadata.uid}', 'u-1'],
    ['{.metadata.labels}', '{"a":"x\\u003cy\\u0026z","z":"1"}'],
    ['{.metadata.annotations.lacchain\\.net/config-checksum}', 'abc'],
    [
      '{.spec.replicas} {.spec.paused} {.spec.gone}|{.spec.empty}|{.spec.missing}|{.spec.missing.deeper}',
      '3 false null|[]||',
    ],
    ['{.spec.containers[*].name}', 'besu nginx'],
    ['{range .spec.containers[*]}{.name}={.ready}/{.restartCount},{end}', 'besu=true/2,nginx=false/0,'],
    [
      '{range .spec.containers[*]}{"\\n"}{.name}:{.state.running.startedAt}{.state.waiting.reason}{end}',
      '\nbesu:T1\nnginx:CrashLoopBackOff',
    ],
    ['{.spec.conditions[?(@.type=="Ready")].status}', 'True'],
    ['{.spec.conditions[?(@.status!="True")].type}', 'Failed'],
    ['{.spec.containers[?(@.ready==true)].name}', 'besu'],
    ['{.spec.containers[-1].name} {.spec.containers[0].state}', 'nginx {"running":{"startedAt":"T1"}}'],
    ['{.metadata.uid}|{range .spec.missing[*]}{.name}{end}|{.metadata.name}', 'u-1||n'],
  ])('%s', (template, printed) => {
    expect(jsonPathText(template, OBJECT)).toBe(printed);
  });

  it('an index out of range fails, as kubectl does ("array index out of bounds: index 2, length 2")', () => {
    expect(() => jsonPathText('{.spec.containers[2].name}', OBJECT)).toThrow(
      new TemplateError('array index out of bounds: index 2, length 2'),
    );
    expect(() => jsonPathText('{.spec.empty[0]}', OBJECT)).toThrow(TemplateError);
  });

  it('a form it does not know is left to kubectl (a slice, a comparison other than == and !=)', () => {
    expect(() => jsonPathText('{.spec.containers[0:1].name}', OBJECT)).toThrow(UnsupportedTemplate);
    expect(() => jsonPathText('{.spec.containers[?(@.restartCount>1)].name}', OBJECT)).toThrow(UnsupportedTemplate);
  });
});
