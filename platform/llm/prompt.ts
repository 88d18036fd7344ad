// The chat-completions request that asks a model for names: a system message with the name rule,
// a user message with the idea (one line) and the count, and a JSON schema for `{names: string[]}`.
// The schema uses only the keywords every strict structured-output server accepts; the bounds it
// cannot say (count, label rule) are in the prompt and enforced again on the answer.
import type { NamesQuestion, NameStyle } from '../../core/builder';

export type { NamesQuestion };

/** The user message's lines start with these; the devnet stand-in reads them back. */
export const PROMPT_LINES = {
  idea: 'Business idea: ',
  count: 'Names wanted: ',
  style: 'Style: ',
} as const;
export const NAMES_SCHEMA_NAME = 'business_names';

const STYLE_HINTS: Readonly<Record<NameStyle, string>> = {
  brandable: 'brandable: invented, memorable words (blends, coined words), not plain descriptions',
  descriptive: 'descriptive: says what the business does, from plain words of the idea',
  short: 'short: at most 8 characters, easy to type',
};

export function chatCompletionRequest(
  model: string,
  question: NamesQuestion,
): Record<string, unknown> {
  const system = [
    'You suggest names for a new business.',
    'Each name must be usable as a domain label: 1 to 63 characters, only lowercase letters a-z, digits 0-9 and hyphens,',
    'not starting or ending with a hyphen, with no spaces, dots or top-level domain.',
    `Answer with JSON only: {"names": [...]}, with exactly ${question.count} distinct names.`,
  ].join(' ');
  // One line: a line break in the idea must not start a line the reader takes for another field.
  const idea = question.idea.replace(/\s+/g, ' ').trim();
  const user = [
    `${PROMPT_LINES.idea}${idea}`,
    `${PROMPT_LINES.count}${question.count}`,
    `${PROMPT_LINES.style}${STYLE_HINTS[question.style]}`,
  ].join('\n');
  return {
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: NAMES_SCHEMA_NAME,
        strict: true,
        schema: {
          type: 'object',
          properties: {
            names: {
              type: 'array',
              items: { type: 'string' },
              description: 'distinct lowercase domain labels',
            },
          },
          required: ['names'],
          additionalProperties: false,
        },
      },
    },
  };
}
