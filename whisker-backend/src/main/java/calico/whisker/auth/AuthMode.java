package calico.whisker.auth;

/** WHISKER_AUTH_MODE. */
public enum AuthMode { TOKEN, BASIC, OIDC, NONE }
