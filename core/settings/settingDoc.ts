/**
 * A setting's meaning, held once, beside its rule in the schema: the settings doc's tables (docs/settings.md,
 * docs/companions.md, written by `npm run docs`) and `npm run init`'s questions are made from it. What is allowed
 * comes from the rule itself (its error sentence), the default from the rule's `.default()` or, where a loader fills
 * it in from the network or the node type, from the words given here.
 */
import { z } from 'zod';

/** What the docs and the guided setup say of one setting. */
export interface SettingDoc {
  /** What it means, in the operator's words (Markdown: backticks and links are removed for the terminal). */
  description: string;
  /** When it is required, where that is not simply "yes" (a rule without default) or "no" (optional). */
  required?: string;
  /** The default in words, where the rule has no `.default()` because a loader fills it in. */
  default?: string;
  /** How the docs name it, where that is not its key (e.g. `lacchain:nodeKeys.<node>`). */
  shownAs?: string;
  /** The docs list the fields of this mapping, each on its own row (`p2p.host`, `proxy.burst`), not the mapping. */
  expand?: true;
}

/** Attaches its meaning to a setting's rule. */
export function setting<S extends z.ZodType>(rule: S, doc: SettingDoc): S {
  return rule.meta({ ...doc });
}

/** The meaning attached to a rule, or undefined when none is. */
export function settingDoc(rule: z.ZodType): SettingDoc | undefined {
  const meta = rule.meta() as Partial<SettingDoc> | undefined;
  return meta?.description ? (meta as SettingDoc) : undefined;
}

/** The rule under its optional and default wrappers. */
export function innerRule(rule: z.ZodType): z.ZodType {
  if (rule instanceof z.ZodOptional || rule instanceof z.ZodDefault) return innerRule(rule.unwrap() as z.ZodType);
  return rule;
}

/** The fields of a mapping's rule (under its optional and default wrappers). */
export function shapeOf(rule: z.ZodType): z.ZodRawShape {
  return (innerRule(rule) as z.ZodObject).shape;
}

/** The value the rule fills in when the setting is absent, if it has one. */
export function ruleDefault(rule: z.ZodType): unknown {
  if (rule instanceof z.ZodDefault) return (rule.def as { defaultValue: unknown }).defaultValue;
  if (rule instanceof z.ZodOptional) return ruleDefault(rule.unwrap() as z.ZodType);
  return undefined;
}

/** True when the setting may be left out. */
export function isOptional(rule: z.ZodType): boolean {
  return rule instanceof z.ZodOptional || rule instanceof z.ZodDefault;
}

/** True when the setting is a number (the guided setup reads the answer as one). */
export function isNumeric(rule: z.ZodType): boolean {
  return innerRule(rule) instanceof z.ZodNumber;
}

/** True when the setting is a list (the guided setup reads the answer as items separated by commas). */
export function isList(rule: z.ZodType): boolean {
  return innerRule(rule) instanceof z.ZodArray;
}

/** What the rule allows: the sentence it gives as its error for a value of the wrong kind. */
export function allowedBy(rule: z.ZodType): string {
  const inner = innerRule(rule);
  const result = inner.safeParse(Symbol('not a setting'));
  const sentence = result.success ? '' : result.error.issues[0].message;
  if (inner instanceof z.ZodArray) return `${sentence}, each ${allowedBy(inner.element as z.ZodType)}`;
  return sentence;
}

/** A setting's meaning as plain text for the terminal: no Markdown backticks, links as their text. */
export function plainMeaning(rule: z.ZodType): string {
  const doc = settingDoc(rule);
  if (!doc) throw new Error('a setting without its meaning in the schema (core/settings/settingDoc.ts)');
  return doc.description
    .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\\\|/g, '|');
}
