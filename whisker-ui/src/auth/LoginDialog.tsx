import { useState } from 'react';
import type { Credential } from './auth';

/** Asks for a bearer token or basic user/password (shown on the first 401). */
export function LoginDialog(props: { message: string; onSubmit: (c: Credential) => void }) {
  const [mode, setMode] = useState<'bearer' | 'basic'>('bearer');
  const [token, setToken] = useState('');
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    if (mode === 'bearer' && token.trim() !== '') props.onSubmit({ kind: 'bearer', token: token.trim() });
    if (mode === 'basic' && user !== '') props.onSubmit({ kind: 'basic', user, password });
  };
  return (
    <div className="modal-backdrop">
      <form className="modal" onSubmit={submit} data-testid="login">
        <h2>Sign in to Whisker</h2>
        <p className="muted">{props.message}</p>
        <div className="tabs small">
          <button type="button" className={mode === 'bearer' ? 'active' : ''} onClick={() => setMode('bearer')}>Token</button>
          <button type="button" className={mode === 'basic' ? 'active' : ''} onClick={() => setMode('basic')}>User / password</button>
        </div>
        {mode === 'bearer' ? (
          <label className="field wide"><span>Bearer token</span>
            <input type="password" autoFocus value={token} onChange={(e) => setToken(e.target.value)} data-testid="login-token" /></label>
        ) : (
          <>
            <label className="field wide"><span>User</span><input autoFocus value={user} onChange={(e) => setUser(e.target.value)} autoComplete="username" /></label>
            <label className="field wide"><span>Password</span><input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" /></label>
          </>
        )}
        <button type="submit" className="btn primary">Sign in</button>
      </form>
    </div>
  );
}
