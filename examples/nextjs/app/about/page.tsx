import Link from 'next/link';

// Another page, so leaving the chat mid-reply (a client-side navigation that unmounts it)
// can be tried: the agent keeps going, and the reply is there when you come back.
export default function About() {
  return (
    <main className="about">
      <h1>About</h1>
      <p>
        The chat you left keeps running on the agent. Going back resumes its reply from the session, without
        asking the agent again.
      </p>
      <Link href="/" data-testid="back-to-chat">
        Back to the chat
      </Link>
    </main>
  );
}
