/**
 * The SSH node's host key question: required (the node key goes over that connection); read by init itself from the
 * machine (ssh-keyscan to that host only) and written once its fingerprint is confirmed, or checked against the
 * operator's known fingerprint; `later` puts it on the still-to-do list, `any` opts out on a test network.
 */
import { DEFAULT_SSH_PORT } from '../../core/catalog/defaults';
import type { Network } from '../../core/catalog/networks';
import { checkField, FieldQuestion, questionMeaning, SSH_QUESTIONS } from '../../core/init/questions';
import { UsageError } from '../cli';
import { Asker, InitValues, switchOn, yesNo } from './asker';
import {
  FINGERPRINT_ALLOWED,
  FINGERPRINT_PATTERN,
  hostKeyFingerprint,
  keyscanCommand,
  scanHostKey,
} from './hostKeyScan';
import type { StackFileNode } from './settingsFiles';

/** The host key question's answer: a key, any key (a test network's opt-in), or later (on the still-to-do list). */
export type HostKeyAnswer = { key?: string; acceptAny: boolean };

/** The host key: required, with the command that reads it; "later" puts it on the list, "any" opts out (test networks). */
export async function askHostKeyQuestion(
  asker: Asker,
  values: InitValues,
  network: Network,
  answers: Record<string, unknown>,
  existing: StackFileNode | undefined,
): Promise<HostKeyAnswer> {
  const question = SSH_QUESTIONS.find((q) => q.key === 'host_key') as FieldQuestion;
  const acceptAnyBefore = existing?.target === 'ssh' && existing.inventory?.accept_any_host_key === true;
  const currentKey = existing?.target === 'ssh' ? (existing.inventory?.host_key as string | undefined) : undefined;
  if (switchOn(values, 'accept-any-host-key')) {
    if (values['host-key'] !== undefined) {
      throw new UsageError(
        '--accept-any-host-key: not with --host-key: give the pinned key (recommended) or this, not both',
      );
    }
    return { acceptAny: true };
  }
  const host = String(answers.host);
  const sshPort = (answers.port as number | undefined) ?? DEFAULT_SSH_PORT;
  const known = values['host-key-fingerprint'];
  if (known !== undefined)
    return { key: scannedKeyMatching(known, host, sshPort, values['host-key']), acceptAny: false };
  if (values['host-key'] === undefined && asker.interactive && currentKey === undefined) {
    // Read by init itself, at this step of the operator's own setup: shown by its fingerprint, written once confirmed.
    const scanned = scanHostKey(host, sshPort);
    const confirmed =
      scanned !== undefined &&
      (await asker.typed(
        `host_key — ${host} answers (${keyscanCommand(host, sshPort)}) with the key ${hostKeyFingerprint(scanned)}: is it your machine's, as its console shows (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub)? [y/N]`,
        yesNo(false),
      ));
    if (confirmed) return { key: scanned, acceptAny: false };
  }
  const fallback = currentKey !== undefined ? { value: currentKey, implicit: false } : undefined;
  if (values['host-key'] !== undefined || !asker.interactive) {
    if (values['host-key'] === undefined && fallback === undefined) return { acceptAny: acceptAnyBefore };
    const key = await asker.ask(question.flag, '', (a) => checkField(question, a, fallback), '', true);
    return { key: key as string, acceptAny: false };
  }
  const port = answers.port === undefined ? '' : ` -p ${answers.port}`;
  const meaning = questionMeaning(question)
    .replace('ssh-keyscan', `ssh-keyscan${port}`)
    .replace('<host>', String(answers.host));
  const choices = `"later" to add it after init${network.allowsUnpinnedHostKey ? ', "any" to connect to whatever answers (test networks only)' : ''}`;
  const shownDefault = fallback ? ` [${fallback.value}]` : acceptAnyBefore ? ' [any]' : '';
  return asker.typed<HostKeyAnswer>(`${question.key} — ${meaning} (required; ${choices})${shownDefault}:`, (answer) => {
    const a = answer.trim() === '' ? (fallback?.value ?? (acceptAnyBefore ? 'any' : '')) : answer.trim();
    if (a === 'later') return { ok: true, value: { acceptAny: false } };
    if (a === 'any') return { ok: true, value: { acceptAny: true } };
    if (a === '') {
      return {
        ok: false,
        problem: `an answer is required: the key ssh-keyscan${port} -t ed25519 ${String(answers.host)} prints, or "later"`,
      };
    }
    const checked = checkField(question, a);
    return checked.ok ? { ok: true, value: { key: checked.value as string, acceptAny: false } } : checked;
  });
}

/**
 * The host key `host` answers with, when its fingerprint is the operator's `known` one (--host-key-fingerprint);
 * refused when it differs, when the machine gives none, or beside --host-key.
 */
function scannedKeyMatching(known: string, host: string, port: number, hostKey: string | undefined): string {
  const flag = '--host-key-fingerprint';
  if (hostKey !== undefined) {
    throw new UsageError(`${flag}: not with --host-key: give the key, or its fingerprint for init to read the key`);
  }
  if (!FINGERPRINT_PATTERN.test(known)) {
    throw new UsageError(`${flag}: given a value that is not a fingerprint; allowed: ${FINGERPRINT_ALLOWED}`);
  }
  const key = scanHostKey(host, port);
  if (key === undefined) {
    throw new UsageError(
      `${flag}: ${keyscanCommand(host, port)} read no host key; allowed: a machine that answers SSH at ${host}:${port}, or --host-key`,
    );
  }
  const actual = hostKeyFingerprint(key);
  if (actual !== known) {
    throw new UsageError(
      `${flag}: given ${known}, but ${host} answers with ${actual}: refused, nothing written (not the machine you know, or its key changed); allowed: the fingerprint of the key ${host} answers with, checked on a channel you trust`,
    );
  }
  return key;
}
