import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { initCredential } from './auth/auth';
import './styles.css';

// Before anything renders: take "#token=..." out of the address bar into sessionStorage.
const credential = initCredential(window.location, window.sessionStorage, (url) => window.history.replaceState(null, '', url));

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App initialCredential={credential} />
  </StrictMode>,
);
