import { DurableChatDevtools } from 'durable-chat/devtools';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';
import { forgetEarlierServer } from './forget-earlier-server.js';
import { loadPlaygroundConfig } from './playground-api.js';
import './styles.css';

const element = document.getElementById('root');
if (element === null) throw new Error('playground: #root is missing from index.html');
const root = createRoot(element);

// The config decides everything else (where sessions live, whether old chats still exist),
// so it loads before the first render.
loadPlaygroundConfig().then(
  (config) => {
    const forgotten = forgetEarlierServer(config);
    // StrictMode on purpose: the hooks must survive its double mount.
    root.render(
      <StrictMode>
        <App config={config} forgotten={forgotten} />
        {/* The playground is a development tool: the panel is always there (an app mounts it in development only). */}
        <DurableChatDevtools position="bottom-left" />
      </StrictMode>,
    );
  },
  (error: unknown) => {
    root.render(
      <div className="error-banner">
        The playground host did not answer: {error instanceof Error ? error.message : String(error)}
      </div>,
    );
  },
);
