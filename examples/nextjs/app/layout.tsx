import type { ReactNode } from 'react';
import { Devtools } from './devtools';
import './globals.css';

export const metadata = { title: 'durable-chat × Next.js' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        {children}
        <Devtools />
      </body>
    </html>
  );
}
