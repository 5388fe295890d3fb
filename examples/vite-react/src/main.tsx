import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import './styles.css';

const root = document.getElementById('root');
if (root === null) throw new Error('no #root element');

// The session service's URL comes from the server at run time (one build, any service).
void fetch('/api/config')
  .then((response) => response.json() as Promise<{ baseURL: string; taskIdentifier: string }>)
  .then((config) =>
    createRoot(root).render(
      <StrictMode>
        <App baseURL={config.baseURL} taskIdentifier={config.taskIdentifier} />
      </StrictMode>,
    ),
  );
