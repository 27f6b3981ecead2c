//! TLS for the HTTP clients ais builds (model providers, `http_get`, OTLP export, MCP servers
//! over streamable HTTP, the Restate ingress and admin API).
//!
//! reqwest is built in this workspace with `rustls-no-provider`, so a process must choose a
//! rustls crypto provider before its first client: [`install_crypto_provider`] installs ring.
//!
//! ```
//! ais_rt::install_crypto_provider();
//! // Twice is fine: the provider is chosen once per process.
//! ais_rt::install_crypto_provider();
//! assert!(rustls::crypto::CryptoProvider::get_default().is_some());
//! ```

/// Installs ring as the process's default rustls crypto provider unless one is installed
/// already (by this function or by the embedding program, whose choice is kept). Call it before
/// building a reqwest client; calling it again is a no-op.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error only says the process chose a provider first: that one stays.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
