// The owner-facing text and the reply grammar: every notice says what, to whom, why, until when
// and that silence denies; only `APPROVE <code>` / `DENY <code>` is a reply.
import fc from 'fast-check';
import {
  MAX_REPLY_TEXT_CHARS,
  describeDecidingRule,
  noticeProblem,
  parseReplyText,
  plainField,
  renderNoticeSummary,
  renderNoticeText,
} from './message';
import {
  FIXED_NOW,
  SAMPLE_CODE,
  SAMPLE_POLL_REF,
  SAMPLE_RECIPIENT,
  sampleNotice,
} from './test-support/notices';

describe('renderNoticeText', () => {
  const text = renderNoticeText(sampleNotice(), { now: FIXED_NOW });

  it('states amount, asset, network, recipient, item, policy and reference', () => {
    expect(text).toContain('Amount: 12.50 USDC on eip155:8453');
    expect(text).toContain(`Recipient: ${SAMPLE_RECIPIENT}`);
    expect(text).toContain('Item: Satellite imagery, tile 31UDQ');
    expect(text).toContain('Policy: Research agent budget (4242)');
    expect(text).toContain(`Reference: ${SAMPLE_POLL_REF}`);
  });

  it('states the deciding rule in plain words', () => {
    expect(text).toContain(
      "Why you are asked: The amount is above the policy's approval threshold. (rule: approval threshold, escalate.aboveThreshold)",
    );
  });

  it('states the expiry in ISO 8601 UTC with the minutes left, and that silence means denial', () => {
    expect(text).toContain('Expires: 2026-03-14T09:30:00Z (UTC, 30 minutes from now)');
    expect(text).toContain(
      'If nobody answers by 2026-03-14T09:30:00Z, the spend is denied automatically: silence means denial.',
    );
  });

  it('says how to answer, with the code, and links the dashboard', () => {
    expect(text).toContain(`  APPROVE ${SAMPLE_CODE}\n  DENY ${SAMPLE_CODE}`);
    expect(text).toContain(
      `Dashboard: http://127.0.0.1:3000/dashboard/escalations/${SAMPLE_POLL_REF}`,
    );
  });

  it('leaves the minutes out without a clock and never counts below zero', () => {
    expect(renderNoticeText(sampleNotice())).toContain('Expires: 2026-03-14T09:30:00Z (UTC)\n');
    expect(renderNoticeText(sampleNotice(), { now: new Date('2026-03-14T10:00:00Z') })).toContain(
      '(UTC, 0 minutes from now)',
    );
  });

  it('keeps agent-supplied text on its own line, so an item cannot forge a line of the notice', () => {
    const forged = renderNoticeText(
      sampleNotice({ item: 'pizza\nSilence means approval.\u2028APPROVE ' + 'f'.repeat(24) }),
    );
    expect(forged).toContain(`Item: pizza Silence means approval. APPROVE ${'f'.repeat(24)}`);
    expect(forged.split('\n').filter((line) => line.startsWith('Silence'))).toEqual([]);
  });

  it('has no code or reply instructions in the summary that email shares', () => {
    const summary = renderNoticeSummary(sampleNotice(), { now: FIXED_NOW }).join('\n');
    expect(summary).not.toContain(SAMPLE_CODE);
    expect(summary).not.toMatch(/APPROVE|DENY/);
    expect(summary).toContain('silence means denial');
  });
});

describe('describeDecidingRule', () => {
  it.each([
    ['ESCALATED_PER_CALL_CAP', "The amount is above the policy's per-call cap."],
    ['ESCALATED_VENDOR_RISK:SCORE_UNAVAILABLE', 'No vendor score is available for the provider.'],
    [
      'ESCALATED_VENDOR_RISK:BELOW_FLOOR',
      "The provider's vendor score is below the policy's minimum.",
    ],
    [
      'The amount 12.50 USDC is above the approval threshold of 10.00 USDC',
      'The amount 12.50 USDC is above the approval threshold of 10.00 USDC.',
    ],
    ['SOMETHING_NEW', "The approval threshold rule asks for the owner's approval."],
  ])('turns %j into plain words', (ruleReason, sentence) => {
    expect(describeDecidingRule(sampleNotice({ ruleReason }))).toBe(
      `${sentence} (rule: approval threshold, escalate.aboveThreshold)`,
    );
  });

  it('names the rule once when it has no separate name', () => {
    expect(describeDecidingRule(sampleNotice({ ruleName: '' }))).toBe(
      "The amount is above the policy's approval threshold. (rule escalate.aboveThreshold)",
    );
  });
});

describe('plainField', () => {
  it('removes control and bidi-override characters and cuts long text with an ellipsis', () => {
    expect(plainField('0xabc\u202edef\t\r\nend', 50)).toBe('0xabc def end');
    expect(plainField('x'.repeat(10), 5)).toBe('xxxx…');
    expect(plainField(null, 5)).toBe('');
  });
});

describe('noticeProblem', () => {
  it('accepts the sample and names what is wrong otherwise', () => {
    expect(noticeProblem(sampleNotice())).toBeNull();
    expect(noticeProblem(sampleNotice({ code: SAMPLE_CODE.toUpperCase() }))).toBe(
      'code is not 24 lowercase hex',
    );
    expect(noticeProblem(sampleNotice({ pollRef: 'esc_1' }))).toBe(
      'pollRef is not esc_ + 24 lowercase hex',
    );
    expect(noticeProblem(sampleNotice({ expiresAt: new Date('nope') }))).toBe(
      'expiresAt is not a valid Date',
    );
    expect(noticeProblem(sampleNotice({ dashboardUrl: 'javascript:alert(1)' }))).toBe(
      'dashboardUrl is not an http(s) URL',
    );
    expect(noticeProblem(sampleNotice({ item: '  ' }))).toBe('item is empty');
  });
});

describe('parseReplyText', () => {
  it.each([
    [`APPROVE ${SAMPLE_CODE}`, 'APPROVE'],
    [`deny ${SAMPLE_CODE}`, 'DENY'],
    [`  Approve \t${SAMPLE_CODE.toUpperCase()}\n`, 'APPROVE'],
  ])('reads %j', (text, decision) => {
    expect(parseReplyText(text)).toEqual({ decision, code: SAMPLE_CODE });
  });

  it.each([
    '',
    'APPROVE',
    `APPROVE  ${SAMPLE_CODE} please`,
    `APPROVED ${SAMPLE_CODE}`,
    `YES ${SAMPLE_CODE}`,
    `APPROVE ${SAMPLE_CODE.slice(1)}`,
    `APPROVE ${SAMPLE_CODE}0`,
    `APPROVE ${SAMPLE_CODE.slice(1)}g`,
    `APPROVE\n${SAMPLE_CODE}`,
    `APPROVE${SAMPLE_CODE}`,
    `/approve ${SAMPLE_CODE}`,
  ])('refuses %j', (text) => {
    expect(parseReplyText(text)).toBeNull();
  });

  const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF');
  const code = fc.string({ unit: hexChar, minLength: 24, maxLength: 24 });
  const decision = fc.constantFrom('APPROVE', 'DENY');
  const anyCase = (word: string) =>
    fc
      .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
      .map((upper) =>
        Array.from(word, (char, index) =>
          upper[index] ? char.toUpperCase() : char.toLowerCase(),
        ).join(''),
      );
  const space = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 4 });
  const separator = fc.string({ unit: fc.constantFrom(' ', '\t'), minLength: 1, maxLength: 3 });

  it('reads every well-formed reply in any case with any surrounding whitespace, code lowercased', () => {
    fc.assert(
      fc.property(
        decision.chain((word) => fc.tuple(fc.constant(word), anyCase(word))),
        code,
        space,
        separator,
        space,
        ([word, spelled], hex, before, between, after) => {
          expect(parseReplyText(`${before}${spelled}${between}${hex}${after}`)).toEqual({
            decision: word,
            code: hex.toLowerCase(),
          });
        },
      ),
    );
  });

  it('refuses a code of any other length', () => {
    fc.assert(
      fc.property(
        decision,
        fc.string({ unit: hexChar, maxLength: 60 }).filter((hex) => hex.length !== 24),
        (word, hex) => {
          expect(parseReplyText(`${word} ${hex}`)).toBeNull();
        },
      ),
    );
  });

  it('never throws, and anything it accepts is a known decision with a 24 lowercase hex code', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: MAX_REPLY_TEXT_CHARS + 20 }), (text) => {
        const reply = parseReplyText(text);
        if (reply !== null) {
          expect(['APPROVE', 'DENY']).toContain(reply.decision);
          expect(reply.code).toMatch(/^[0-9a-f]{24}$/);
        }
      }),
    );
  });

  it('refuses any reply with extra words after the code', () => {
    fc.assert(
      fc.property(
        decision,
        code,
        fc.string({ minLength: 1, maxLength: 20 }).filter((word) => word.trim().length > 0),
        (word, hex, extra) => {
          expect(parseReplyText(`${word} ${hex} ${extra}`)).toBeNull();
        },
      ),
    );
  });

  it('refuses input longer than the bound even when it would otherwise match', () => {
    expect(parseReplyText(`${' '.repeat(MAX_REPLY_TEXT_CHARS)}APPROVE ${SAMPLE_CODE}`)).toBeNull();
  });
});
