//! The private network of tool processes, in a network namespace the test
//! makes itself (never the host's): the test re-runs itself under
//! `unshare --net --mount`, where it sets up an "outside" address, a 10.x
//! address, the metadata address and loopback services, then has a tool
//! process try each of them through the private network.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use subagent_sandbox::net::{NetworkOptions, PrivateNetwork, Stack, StackKind, find_stack};

use super::support::needs;
use super::tool_sandbox_support::{Dirs, dirs, probe, run, stdout, strict};

/// Set in the re-run inside the test's own network namespace.
const INNER: &str = "SUBAGENT_NET_TEST_INNER";

/// Runs `test` (this file's test named so) in a fresh network and mount
/// namespace; true when this is that run.
fn in_own_namespace(test: &str) -> bool {
    if std::env::var_os(INNER).is_some() {
        return true;
    }
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let probe = match (stacks().len(), root) {
        (2, true) => Ok(()),
        (_, true) => Err(
            "slirp4netns and pasta are not both installed (apt-get install slirp4netns passt)"
                .to_owned(),
        ),
        (_, false) => Err("root, to make the test's own network namespace".to_owned()),
    };
    if needs("slirp4netns, pasta and root", probe).is_none() {
        return false;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("unshare")
        .args(["--net", "--mount", "--"])
        .arg(exe)
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(INNER, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the inner run failed:\n{text}");
    assert!(
        text.contains("1 passed"),
        "the inner run ran no test:\n{text}"
    );
    false
}

/// The test network ([`LAB`]), serving until dropped.
struct Lab {
    child: std::process::Child,
    services: BTreeMap<String, (String, u16)>,
}

/// The IPv6 address the lab's resolver gives `outside.test`.
const OUTSIDE_V6: &str = "2606:2800:21f:cb07::34";

/// Sets up the namespaces and services (see the script's doc).
const LAB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/netlab.py");

impl Lab {
    fn start() -> Lab {
        let mut child = Command::new("python3")
            .arg(LAB)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let services = serde_json::from_str(&line).expect("the lab printed its services");
        Lab { child, services }
    }

    fn service(&self, name: &str) -> (String, u16) {
        self.services[name].clone()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Resolves `outside.test` (A and AAAA, through the private network's
/// forwarder) and connects to the IPv4 answer.
const DNS_PROBE: &str = "import socket
v6 = socket.getaddrinfo('outside.test', PORT, socket.AF_INET6)[0][4][0]
assert v6 == 'V6', v6
v4 = socket.getaddrinfo('outside.test', PORT, socket.AF_INET)[0][4]
s = socket.create_connection(v4, timeout=5)
assert s.recv(100).startswith(b'SECRET'), 'no answer'";

fn connect_probe(address: &str, port: u16) -> String {
    probe(&format!(
        "import socket\ns = socket.create_connection(('{address}', {port}), timeout=5)\nassert s.recv(100).startswith(b'SECRET'), 'no answer'"
    ))
}

/// Whether a tool process reaches `address:port`, and what it said.
async fn reaches(
    network: &Arc<PrivateNetwork>,
    dirs: &Dirs,
    address: &str,
    port: u16,
) -> (bool, String) {
    let mut isolation = strict(dirs);
    isolation.network = true;
    isolation.private_network = Some(Arc::clone(network));
    let code = if address == "outside.test" {
        probe(
            &DNS_PROBE
                .replace("PORT", &port.to_string())
                .replace("V6", OUTSIDE_V6),
        )
    } else {
        connect_probe(address, port)
    };
    let exit = run(&code, dirs, isolation).await;
    let out = stdout(&exit);
    assert!(
        out.starts_with("ESCAPED") || out.starts_with("DENIED"),
        "{address}: {out:?} {:?}",
        exit.stderr.lossy_text()
    );
    (out.starts_with("ESCAPED"), out)
}

/// Each stack installed here, found by name.
fn stacks() -> Vec<Stack> {
    [StackKind::Slirp4netns, StackKind::Pasta]
        .into_iter()
        .filter_map(|kind| find_stack(Some(OsStr::new(kind.program_name())), None, false).ok())
        .collect()
}

/// Where a tool reaches the lab's service `name` at `address` on `stack`:
/// the host's loopback is at slirp4netns's gateway.
fn address_on(stack: &Stack, name: &str, address: String) -> String {
    if name == "loopback" && stack.kind == StackKind::Slirp4netns {
        subagent_sandbox::net::slirp::SLIRP_GATEWAY_V4.to_string()
    } else {
        address
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_network_reaches_the_outside_and_refuses_the_rest() {
    if !in_own_namespace(
        "suite::tool_sandbox_net::private_network_reaches_the_outside_and_refuses_the_rest",
    ) {
        return;
    }
    let lab = Lab::start();
    let dirs = dirs();
    // (service, reached with no flag, with private networks, with
    // link-local networks)
    let expected = [
        ("outside", true, true, true),
        ("outside_v6", true, true, true),
        ("private_10", false, true, false),
        ("metadata", false, false, true),
        ("loopback", false, true, false),
        ("own_address", false, true, false),
    ];
    let flags = [
        ("no flag", NetworkOptions::default()),
        (
            "private networks",
            NetworkOptions {
                allow_private_networks: true,
                allow_link_local_networks: false,
            },
        ),
        (
            "link-local networks",
            NetworkOptions {
                allow_private_networks: false,
                allow_link_local_networks: true,
            },
        ),
    ];
    for stack in stacks() {
        for (index, (flag, options)) in flags.into_iter().enumerate() {
            let network = PrivateNetwork::start_on(stack.clone(), options)
                .await
                .unwrap();
            let pids = network.pids();
            for (name, none, private, link_local) in expected {
                let (address, port) = lab.service(name);
                let address = address_on(&stack, name, address);
                let (reached, said) = reaches(&network, &dirs, &address, port).await;
                let expect = [none, private, link_local][index];
                assert_eq!(
                    reached, expect,
                    "{name} ({address}) on {:?} with {flag}: {said}",
                    stack.kind
                );
            }
            let (_, port) = lab.service("outside");
            let (resolved, said) = reaches(&network, &dirs, "outside.test", port).await;
            assert!(resolved, "outside.test by name on {:?}: {said}", stack.kind);
            drop(network);
            for pid in pids {
                assert!(
                    !std::path::Path::new(&format!("/proc/{pid}")).exists(),
                    "pid {pid} of the private network outlived it"
                );
            }
        }
    }
}
