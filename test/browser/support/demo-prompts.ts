/**
 * What the tests send to the demo agent (src/dev-server/agents/demo-script.ts: the reply
 * is decided by the prompt alone) and what they expect back.
 */
export const DEMO = {
  /** Anything without a keyword: a short markdown reply quoting the message. */
  markdown: { prompt: 'Hello there, demo agent', contains: 'Demo agent here. You said:' },
  /** "long" or "story": the long markdown answer, about 230 pieces at a reading pace. */
  long: {
    prompt: 'Tell me a long story',
    opening: 'A long answer, worth stopping',
    ending: 'Thanks for reading to the end!',
    minimumLength: 900,
  },
  /** "email": the sendEmail tool, which needs approval. */
  approval: {
    prompt: 'Please send an email to the team',
    approvedText: 'the email is on its way',
    deniedText: 'the email was not sent',
  },
  /** "ask" or "choose": the askUser tool, whose output the user supplies. */
  askUser: { prompt: 'Ask me something', option: 'pistachio', typed: 'mint chocolate chip' },
  dataPartType: 'data-status',
} as const;
