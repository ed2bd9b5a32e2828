//! The private network of one run's tool processes: a holder owning the
//! namespaces with the refusing rules in place ([`super::holder`]), pasta
//! connecting them to the outside ([`super::pasta`]), and the
//! `resolv.conf` tool processes see (naming pasta's DNS forwarder).
//!
//! Started on first use by a run that has the network on, shared by every
//! call of the run, stopped (holder and pasta killed and reaped) when the
//! last handle is dropped. This module decides which ranges from the
//! table ([`super::ranges`]) and the host's own addresses; it enforces
//! nothing itself.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::holder::Holder;
use super::netlink::{self, Request};
use super::pasta::{self, Pasta, PastaArgs};
use super::ranges;
use crate::spawner;

/// The address tool processes send DNS queries to (UDP port 53 only),
/// which pasta maps to the host's resolver. In the link-local range, which
/// nothing opens, so only the rule that lets DNS to it through reaches it.
pub const DNS_FORWARD_V4: Ipv4Addr = Ipv4Addr::new(169, 254, 0, 53);
/// The IPv6 twin of [`DNS_FORWARD_V4`], in the unique-local range.
pub const DNS_FORWARD_V6: Ipv6Addr = Ipv6Addr::new(0xfd53, 0x5ba9, 0xe47, 0, 0, 0, 0, 0x53);

/// What the private network lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NetworkOptions {
    /// Loopback (the host's, through pasta) and the private and special
    /// ranges are reachable; link-local stays refused.
    pub allow_private_networks: bool,
}

/// Why the private network could not be had.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// pasta is not installed.
    #[error(
        "the tools' network needs a private network namespace, and `pasta` is not on PATH: {}",
        pasta::PASTA_INSTALL_HINT
    )]
    NoStack,
    /// A step of the setup failed.
    #[error("the tools' private network could not be set up: {0}")]
    Setup(String),
}

/// A running private network. Dropping the last handle stops it.
#[derive(Debug)]
pub struct PrivateNetwork {
    // Field order is drop order: pasta first, then the holder.
    pasta: Pasta,
    holder: Holder,
    dir: tempfile::TempDir,
    resolv_conf: PathBuf,
}

impl PartialEq for PrivateNetwork {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for PrivateNetwork {}

impl PrivateNetwork {
    /// Starts the network with `options`, pasta from `PATH`.
    pub async fn start(options: NetworkOptions) -> Result<Arc<PrivateNetwork>, NetworkError> {
        let program = pasta::find_pasta(None).ok_or(NetworkError::NoStack)?;
        let rules = refusing_rules(options, &own_addresses());
        let dir = tempfile::Builder::new()
            .prefix("subagent-net-")
            .tempdir()
            .map_err(|e| NetworkError::Setup(format!("cannot make its private dir: {e}")))?;
        let resolv_conf = dir.path().join("resolv.conf");
        std::fs::write(
            &resolv_conf,
            format!("nameserver {DNS_FORWARD_V4}\nnameserver {DNS_FORWARD_V6}\n"),
        )
        .map_err(|e| NetworkError::Setup(format!("cannot write its resolv.conf: {e}")))?;
        let args = PastaArgs {
            program,
            dns_forward: vec![DNS_FORWARD_V4.into(), DNS_FORWARD_V6.into()],
            host_loopback: options.allow_private_networks,
        };
        let dir_path = dir.path().to_owned();
        let started = spawner::call(
            move || {
                let holder = Holder::start(vec![netlink::loopback_up()], rules)?;
                let pasta = Pasta::start(
                    &args,
                    &holder.user_namespace,
                    &holder.network_namespace,
                    &dir_path,
                )?;
                // No tool joins before this returns: the rules are in
                // place before the first call can connect anywhere.
                holder.install_rules()?;
                Ok((pasta, holder))
            },
            drop,
        )
        .await
        .map_err(|e| NetworkError::Setup(e.to_string()))?;
        let (pasta, holder) = started;
        Ok(Arc::new(PrivateNetwork {
            pasta,
            holder,
            dir,
            resolv_conf,
        }))
    }

    /// The `resolv.conf` tool processes are given.
    pub fn resolv_conf(&self) -> &Path {
        &self.resolv_conf
    }

    /// The user namespace to join first (its owner may).
    pub(crate) fn user_namespace_fd(&self) -> RawFd {
        self.holder.user_namespace.as_raw_fd()
    }

    /// The network namespace to join next.
    pub(crate) fn network_namespace_fd(&self) -> RawFd {
        self.holder.network_namespace.as_raw_fd()
    }

    /// The pids of the holder and of pasta, for tests that check nothing
    /// outlives the run.
    pub fn pids(&self) -> [u32; 2] {
        [
            u32::try_from(self.holder.pid()).unwrap_or(0),
            self.pasta.pid(),
        ]
    }

    /// The private dir (for tests).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// The host's own addresses (of every interface, loopback's aside): pasta
/// would connect to them from the host, so they are refused like the
/// ranges private networks open.
fn own_addresses() -> Vec<IpAddr> {
    let Ok(addresses) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    let mut out: Vec<IpAddr> = addresses
        .filter_map(|a| a.address)
        .filter_map(|a| {
            a.as_sockaddr_in()
                .map(|v4| IpAddr::V4(v4.ip()))
                .or_else(|| a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
        })
        .filter(|ip| !ip.is_loopback())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The rules the holder installs once pasta configured the namespace: DNS
/// to the forwarder let through, then one refusing rule per range
/// `options` keeps closed and per own address outside them.
pub(crate) fn refusing_rules(options: NetworkOptions, own: &[IpAddr]) -> Vec<Request> {
    let mut requests = vec![
        netlink::allow_dns(DNS_FORWARD_V4.into()),
        netlink::allow_dns(DNS_FORWARD_V6.into()),
    ];
    for range in ranges::all_ranges() {
        if !range.is_open(options.allow_private_networks) {
            requests.push(netlink::refuse(range.network, range.prefix));
        }
    }
    if !options.allow_private_networks {
        for ip in own {
            let closed = ranges::all_ranges().any(|r| r.contains(*ip));
            if !closed {
                let prefix = if ip.is_ipv4() { 32 } else { 128 };
                requests.push(netlink::refuse(*ip, prefix));
            }
        }
    }
    requests
}

/// Whether a private network can be had here: pasta's path and version,
/// or why not.
pub fn network_stack() -> Result<(PathBuf, Option<String>), NetworkError> {
    let program = pasta::find_pasta(None).ok_or(NetworkError::NoStack)?;
    let version = pasta::pasta_version(&program);
    Ok((program, version))
}

/// Whether pasta is on `PATH` (cheap: no process started).
pub fn network_stack_found() -> bool {
    pasta::find_pasta(None).is_some()
}

impl From<io::Error> for NetworkError {
    fn from(e: io::Error) -> Self {
        NetworkError::Setup(e.to_string())
    }
}
