//! What the built-in library may reach beyond the output root: the **read roots** `read_file`,
//! `list_dir`, `glob_files` and `grep` are confined to, and the **network** `http_get` may fetch.
//!
//! - **Reads.** A path a built-in reads is resolved (symlinks followed, `..` applied) and must
//!   then lie under a read root: the output root, the call's scratch directory, the working
//!   directory the runtime was built in, and each root added with
//!   [`RuntimeBuilder::allow_read`](crate::RuntimeBuilder::allow_read) (`ais run --allow-read
//!   PATH`). Anything else — `/etc/shadow`, `~/.ssh/id_rsa`, a symlink in the root pointing out
//!   of it — is refused with [`ToolErrorKind::PathEscape`]. Only regular files are read:
//!   `read_file` refuses a FIFO, a device or a socket (opened without blocking, checked on the
//!   open descriptor), and `grep` skips them.
//! - **Network.** `http_get` refuses a loopback, private (RFC 1918, unique-local), link-local
//!   (the cloud metadata address `169.254.169.254` included), carrier-grade NAT, multicast,
//!   broadcast or unspecified address, and an IPv4 address mapped into IPv6 as one of those. The
//!   check is made on the addresses a host name **resolves to**, by the resolver the HTTP client
//!   connects with — so the address checked is the address connected to, with no second lookup
//!   in between — on an IP address written in the URL, and on the URL of **every redirect**.
//!   A host named with [`RuntimeBuilder::allow_net`](crate::RuntimeBuilder::allow_net) (`ais run
//!   --allow-net HOST`, the host as the URL writes it: `localhost`, `127.0.0.1`, `[::1]`) is
//!   exempt. A proxy configured in the environment (`HTTPS_PROXY`, …) does its own resolving and
//!   is outside this check.

use super::{ToolContext, ToolError, ToolErrorKind};
#[cfg(feature = "http")]
use std::net::SocketAddr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
#[cfg(feature = "http")]
use std::sync::{Arc, OnceLock};

/// The read roots and the allowed network hosts of a run's tool calls (see the module docs).
#[derive(Debug, Default)]
pub struct AccessPolicy {
    /// Roots reads may reach besides the output root and the scratch directory.
    pub read_roots: Vec<PathBuf>,
    /// Hosts `http_get` may fetch even when they are loopback, private or link-local.
    pub allow_net: Vec<String>,
    /// The directory the runtime was started in: a relative path a read-side step is given is
    /// looked for here first (`destination`).
    pub start: Option<PathBuf>,
    /// Whether a destination the task names after a save verb may replace a file that exists
    /// and this run did not create (`ais run --overwrite`; see
    /// `destination`).
    pub overwrite: bool,
    #[cfg(feature = "http")]
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl AccessPolicy {
    /// A policy reading under `read_roots` (and the output root) and allowing `allow_net`.
    pub fn new(read_roots: Vec<PathBuf>, allow_net: Vec<String>) -> Self {
        AccessPolicy {
            read_roots,
            allow_net: allow_net
                .into_iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            start: None,
            overwrite: false,
            #[cfg(feature = "http")]
            client: OnceLock::new(),
        }
    }

    /// Whether `host` (as a URL writes it) is exempt from the address check.
    pub fn net_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_net
            .iter()
            .any(|a| a == &host || a.trim_start_matches('[').trim_end_matches(']') == bare)
    }

    /// The HTTP client of this policy: its resolver and its redirect policy check every
    /// address (built once).
    #[cfg(feature = "http")]
    pub(crate) fn client(self: &Arc<Self>) -> Result<&reqwest::Client, ToolError> {
        let policy = self.clone();
        self.client
            .get_or_init(move || build_client(policy))
            .as_ref()
            .map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Io,
                    format!("tool `http_get` could not set up its HTTP client: {e}"),
                )
            })
    }

    /// A refusal of `url` when its host is an IP address the policy does not let
    /// `http_get` reach (a host name is checked when it resolves).
    #[cfg(feature = "http")]
    pub(crate) fn refuse_url(&self, url: &reqwest::Url) -> Option<String> {
        let host = url.host_str()?;
        let ip: IpAddr = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .ok()?;
        (!is_public(ip) && !self.net_allowed(host)).then(|| refusal(host, &[ip]))
    }
}

#[cfg(feature = "http")]
fn refusal(host: &str, ips: &[IpAddr]) -> String {
    let shown: Vec<String> = ips.iter().map(IpAddr::to_string).collect();
    format!(
        "`{host}` is {}, a loopback, private or link-local address, which http_get does not fetch; allow it with `--allow-net {host}`",
        shown.join(", ")
    )
}

#[cfg(feature = "http")]
fn build_client(policy: Arc<AccessPolicy>) -> Result<reqwest::Client, String> {
    crate::tls::install_crypto_provider();
    let redirects = policy.clone();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                return attempt.error("more than 10 redirects");
            }
            if !matches!(attempt.url().scheme(), "http" | "https") {
                let scheme = attempt.url().scheme().to_owned();
                return attempt.error(format!("a redirect to a `{scheme}:` URL"));
            }
            match redirects.refuse_url(attempt.url()) {
                Some(why) => attempt.error(format!("a redirect: {why}")),
                None => attempt.follow(),
            }
        }))
        .dns_resolver(Arc::new(Guard(policy)))
        .user_agent(concat!("ais/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())
}

/// The resolver `http_get` connects through: a host's addresses, less those the policy does
/// not let it reach; none left is an error.
#[cfg(feature = "http")]
struct Guard(Arc<AccessPolicy>);

#[cfg(feature = "http")]
impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if policy.net_allowed(&host) {
                return Ok(Box::new(found.into_iter()) as reqwest::dns::Addrs);
            }
            let (public, refused): (Vec<SocketAddr>, Vec<SocketAddr>) =
                found.into_iter().partition(|a| is_public(a.ip()));
            if public.is_empty() {
                let ips: Vec<IpAddr> = refused.iter().map(SocketAddr::ip).collect();
                return Err(std::io::Error::other(refusal(&host, &ips)).into());
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether `ip` is an address `http_get` may reach without `--allow-net`.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => public_v4(v4),
            None => public_v6(v6),
        },
    }
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        || a >= 240)
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
fn public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || ip.to_ipv4().is_some_and(|v4| !public_v4(v4) && first == 0))
}

/// The path a built-in reads for `raw` (see [`read_path`]), resolved and checked to lie under
/// a read root of `ctx`: the resolved path, or a [`ToolErrorKind::PathEscape`] naming the
/// roots. A path that does not exist is returned as it is (the read then fails naming it).
pub(crate) fn confine_read(
    ctx: &ToolContext,
    tool: &str,
    path: &Path,
) -> Result<PathBuf, ToolError> {
    let Ok(real) = path.canonicalize() else {
        return Ok(path.to_path_buf());
    };
    let mut roots: Vec<&Path> = vec![&ctx.root];
    roots.extend(ctx.scratch.as_deref());
    roots.extend(ctx.policy.read_roots.iter().map(PathBuf::as_path));
    let inside = roots
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .any(|r| real.starts_with(&r));
    if inside {
        return Ok(real);
    }
    let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    Err(ToolError::new(
        ToolErrorKind::PathEscape,
        format!(
            "tool `{tool}`: {} is outside the directories this run may read ({}); allow it with `--allow-read PATH`",
            path.display(),
            shown.join(", ")
        ),
    ))
}

/// Opens `path` for reading only if it is a regular file, without blocking on a FIFO.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{FileType, Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(std::io::Error::other(
            "it is not a regular file (a FIFO, a device or a socket is never read)",
        ));
    }
    Ok(std::fs::File::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn allowed_hosts_match_as_the_url_writes_them() {
        let p = AccessPolicy::new(Vec::new(), vec!["LocalHost".into(), "[::1]".into()]);
        assert!(p.net_allowed("localhost") && p.net_allowed("::1") && p.net_allowed("[::1]"));
        assert!(!p.net_allowed("127.0.0.1"));
        #[cfg(feature = "http")]
        {
            let url = reqwest::Url::parse("http://127.0.0.1:9/x").unwrap();
            assert!(p.refuse_url(&url).is_some());
            let url = reqwest::Url::parse("http://[::1]:9/x").unwrap();
            assert!(p.refuse_url(&url).is_none());
        }
    }
}
