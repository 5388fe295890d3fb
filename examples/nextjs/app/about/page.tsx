import Link from 'next/link';

// Another page, so leaving the chat mid-reply (a client-side navigation that unmounts it)
// can be tried: the agent keeps going, and the reply is there when you come back.
export default async function About({ searchParams }: { searchParams: Promise<{ back?: string }> }) {
  const { back } = await searchParams;
  // The chat page that linked here (`/?chat=…` or `/durable?chat=…`); only a path of this app.
  const chat = typeof back === 'string' && /^\/(?![/\\])/.test(back) ? back : '/';
  return (
    <main className="about">
      <h1>About</h1>
      <p>
        The chat you left keeps running on the agent. Going back resumes its reply from the session, without
        asking the agent again.
      </p>
      <Link href={chat} data-testid="back-to-chat">
        Back to the chat
      </Link>
    </main>
  );
}
