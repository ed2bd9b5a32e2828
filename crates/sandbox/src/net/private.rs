//! The private network of one run's tool processes: a holder owning the
//! namespaces with the refusing rules in place ([`super::holder`]), a
//! user-mode stack connecting them to the outside ([`super::stack`]:
//! slirp4netns or pasta), and the `resolv.conf` tool processes see (naming
//! the stack's DNS forwarder).
//!
//! Started on first use by a run that has the network on, shared by every
//! call of the run, stopped (holder and pasta killed and reaped) when the
//! last handle is dropped. This module decides which ranges from the
//! table ([`super::ranges`]) and the host's own addresses; it enforces
//! nothing itself.

use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::holder::Holder;
use super::netlink::{self, Request};
use super::ranges;
use super::stack::{self, NoStack, RunningStack, Stack, StackKind};
use crate::spawner;

/// What the private network lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NetworkOptions {
    /// Loopback (the host's, through pasta) and the private and special
    /// ranges are reachable; link-local stays refused.
    pub allow_private_networks: bool,
    /// Link-local addresses, the cloud metadata services among them, are
    /// reachable.
    pub allow_link_local_networks: bool,
}

impl NetworkOptions {
    /// The table's openers these options amount to.
    pub fn openers(self) -> ranges::Openers {
        ranges::Openers {
            private_networks: self.allow_private_networks,
            link_local_networks: self.allow_link_local_networks,
        }
    }
}

/// Why the private network could not be had.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// No stack is installed (or the chosen one is not).
    #[error("{0}")]
    NoStack(NoStack),
    /// A step of the setup failed.
    #[error("the tools' private network could not be set up: {0}")]
    Setup(String),
}

/// A running private network. Dropping the last handle stops it.
#[derive(Debug)]
pub struct PrivateNetwork {
    // Field order is drop order: the stack first, then the holder.
    stack: RunningStack,
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
    /// Starts the network with `options`, on the stack this process finds
    /// ([`stack::current_stack`]).
    pub async fn start(options: NetworkOptions) -> Result<Arc<PrivateNetwork>, NetworkError> {
        let stack = stack::current_stack_for(options.allow_private_networks)
            .map_err(NetworkError::NoStack)?;
        Self::start_on(stack, options).await
    }

    /// Starts the network with `options` on `stack`.
    pub async fn start_on(
        stack: Stack,
        options: NetworkOptions,
    ) -> Result<Arc<PrivateNetwork>, NetworkError> {
        let dns = stack.kind.dns_servers();
        let mut rules = match stack.kind {
            StackKind::Slirp4netns => super::slirp::ipv6_setup(),
            StackKind::Pasta => Vec::new(),
        };
        rules.extend(refusing_rules(options, &dns, &own_addresses()));
        let dir = tempfile::Builder::new()
            .prefix("subagent-net-")
            .tempdir()
            .map_err(|e| NetworkError::Setup(format!("cannot make its private dir: {e}")))?;
        let resolv_conf = dir.path().join("resolv.conf");
        std::fs::write(
            &resolv_conf,
            format!("nameserver {}\nnameserver {}\n", dns[0], dns[1]),
        )
        .map_err(|e| NetworkError::Setup(format!("cannot write its resolv.conf: {e}")))?;
        let host_loopback = options.allow_private_networks;
        let dir_path = dir.path().to_owned();
        let started = spawner::call(
            move || {
                let holder = Holder::start(vec![netlink::loopback_up()], rules)?;
                let running = RunningStack::start(
                    &stack,
                    host_loopback,
                    &holder.user_namespace,
                    &holder.network_namespace,
                    &dir_path,
                )?;
                // No tool joins before this returns: the rules are in
                // place before the first call can connect anywhere.
                holder.install_rules()?;
                Ok((running, holder))
            },
            drop,
        )
        .await
        .map_err(|e| NetworkError::Setup(e.to_string()))?;
        let (stack, holder) = started;
        Ok(Arc::new(PrivateNetwork {
            stack,
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

    /// The pids of the holder and of the stack, for tests that check
    /// nothing outlives the run.
    pub fn pids(&self) -> [u32; 2] {
        [
            u32::try_from(self.holder.pid()).unwrap_or(0),
            self.stack.pid(),
        ]
    }

    /// The private dir (for tests).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// The host's own addresses (of every interface, loopback's aside): the
/// stack would connect to them from the host, so they are refused like the
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

/// The rules the holder installs once the stack configured the namespace:
/// DNS to the stack's forwarders (`dns`) let through, each opened range that lies inside a
/// refused wider one let through (the table's narrower range decides, as
/// in scrape_webpage's guard), then one refusing rule per range `options`
/// keeps closed and per own address outside them.
pub(crate) fn refusing_rules(
    options: NetworkOptions,
    dns: &[IpAddr],
    own: &[IpAddr],
) -> Vec<Request> {
    let openers = options.openers();
    let mut requests: Vec<Request> = dns.iter().map(|a| netlink::allow_dns(*a)).collect();
    for range in ranges::all_ranges().filter(|r| r.is_open(openers)) {
        let inside_a_refused_one = ranges::all_ranges().any(|wider| {
            wider.prefix < range.prefix && !wider.is_open(openers) && wider.contains(range.network)
        });
        if inside_a_refused_one {
            requests.push(netlink::allow(range.network, range.prefix));
        }
    }
    for range in ranges::all_ranges() {
        if !range.is_open(openers) {
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

/// Whether a private network can be had here: the stack and its
/// version, or why not.
pub fn network_stack() -> Result<(Stack, Option<String>), NetworkError> {
    let stack = stack::current_stack().map_err(NetworkError::NoStack)?;
    let version = stack::stack_version(&stack);
    Ok((stack, version))
}

/// Whether a stack is on `PATH` (cheap: no process started).
pub fn network_stack_found() -> bool {
    stack::current_stack().is_ok()
}

/// The stack's kind, when one is found (for status lines and messages).
pub fn network_stack_kind() -> Option<StackKind> {
    stack::current_stack().ok().map(|s| s.kind)
}

impl From<io::Error> for NetworkError {
    fn from(e: io::Error) -> Self {
        NetworkError::Setup(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dns() -> Vec<IpAddr> {
        StackKind::Slirp4netns.dns_servers().to_vec()
    }

    #[test]
    fn an_opened_range_inside_a_refused_one_is_let_through_first() {
        let metadata_v6: IpAddr = "fd00:ec2::254".parse().unwrap();
        let link_local_only = NetworkOptions {
            allow_private_networks: false,
            allow_link_local_networks: true,
        };
        let rules = refusing_rules(link_local_only, &dns(), &[]);
        let allow = netlink::allow(metadata_v6, 128);
        let refuse_wider = netlink::refuse("fc00::".parse().unwrap(), 7);
        let at = |r: &Request| rules.iter().position(|x| x == r);
        assert!(at(&allow).is_some(), "no allow rule for fd00:ec2::254");
        assert!(at(&refuse_wider).is_some(), "fc00::/7 not refused");
        assert!(!rules.contains(&netlink::refuse(metadata_v6, 128)));
        // Without the flag, no allow rule, and the address is refused.
        let rules = refusing_rules(NetworkOptions::default(), &dns(), &[]);
        assert!(!rules.contains(&allow));
        assert!(rules.contains(&netlink::refuse(metadata_v6, 128)));
    }

    #[test]
    fn dns_is_let_through_to_the_stacks_forwarders_only() {
        let rules = refusing_rules(NetworkOptions::default(), &dns(), &[]);
        for server in dns() {
            assert!(rules.contains(&netlink::allow_dns(server)), "{server}");
        }
        let pasta = StackKind::Pasta.dns_servers();
        assert!(!rules.contains(&netlink::allow_dns(pasta[0])));
    }
}
