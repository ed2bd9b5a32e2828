//! A throwaway single-node Slurm cluster for one test: munged, slurmctld and
//! slurmd from Debian's `munge` and `slurm-wlm`, started as root with their
//! key, config, state, spool and logs in a temp dir, on loopback ports, and
//! stopped after.
//!
//! It must never touch the machine's own Slurm or munge (no file under /etc,
//! /run or /var is read or written: every path is in the config it writes),
//! nor outlive the test: [`Cluster`]'s drop cancels the jobs and stops the
//! daemons, and a watchdog in its own session kills everything whose working
//! directory is in the temp dir (the daemons, `slurmstepd`, the jobs) when
//! the test process dies without dropping it, or after [`WATCHDOG_LIMIT`].

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::support::processes_in;

/// The programs the cluster needs, and the Debian package of each.
const PROGRAMS: [(&str, &str); 8] = [
    ("munged", "munge"),
    ("slurmctld", "slurmctld (slurm-wlm)"),
    ("slurmd", "slurmd (slurm-wlm)"),
    ("sbatch", "slurm-client (slurm-wlm)"),
    ("squeue", "slurm-client (slurm-wlm)"),
    ("scontrol", "slurm-client (slurm-wlm)"),
    ("scancel", "slurm-client (slurm-wlm)"),
    ("sinfo", "slurm-client (slurm-wlm)"),
];

/// The node's name in the config (slurmd is told it with `-N`).
pub const NODE: &str = "subagent-test-node";

/// The longest the cluster may live, whatever the test does: the watchdog
/// stops everything after this.
pub const WATCHDOG_LIMIT: Duration = Duration::from_secs(300);

/// How long a daemon or the jobs may take to reach a state on a loaded
/// 2-core machine.
pub const WAIT: Duration = Duration::from_secs(90);

/// How often a state is polled.
const POLL: Duration = Duration::from_millis(100);

/// Why the cluster cannot run here (not root, a program missing), if so.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: munged, slurmctld and slurmd must run as root".into());
    }
    let missing: Vec<&str> = PROGRAMS
        .iter()
        .filter(|(program, _)| find_program(program).is_none())
        .map(|(_, package)| *package)
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "not installed: {} (apt-get install slurm-wlm munge)",
            missing.join(", ")
        )
    })
}

/// `program` on `PATH` or in the sbin dirs (not on a plain user's `PATH`).
fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

fn program(name: &str) -> PathBuf {
    find_program(name).unwrap_or_else(|| panic!("{name} not found"))
}

/// A running cluster.
pub struct Cluster {
    root: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
    /// The watchdog's stdin: closing it (or our death) sets it off.
    watchdog: Option<(Child, ChildStdin)>,
}

impl Cluster {
    /// Starts munged, slurmctld and slurmd and waits until the node is idle.
    pub fn start() -> Self {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().to_owned();
        // munged refuses a socket in a dir others cannot traverse.
        set_mode(&dir, 0o755);
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir(dir.join(sub)).unwrap();
        }
        let watchdog = start_watchdog(&dir);
        let mut cluster = Self {
            conf: dir.join("slurm.conf"),
            root,
            daemons: Vec::new(),
            watchdog: Some(watchdog),
        };
        cluster.start_munged();
        std::fs::write(&cluster.conf, slurm_conf(&dir)).unwrap();
        cluster.spawn_daemon("slurmctld", &["-D", "-i", "-f"]);
        cluster.spawn_daemon("slurmd", &["-D", "-N", NODE, "-f"]);
        cluster.wait_until("the node to be idle", |c| {
            c.output("sinfo", &["-h", "-n", NODE, "-o", "%t"])
                .is_some_and(|s| s.trim() == "idle")
        });
        cluster
    }

    /// The temp dir everything of the cluster runs in.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// A Slurm client command for this cluster (`SLURM_CONF` set), stdin
    /// closed, run in the cluster's dir.
    pub fn command(&self, name: &str) -> Command {
        let mut c = Command::new(program(name));
        c.env("SLURM_CONF", &self.conf)
            .current_dir(self.root())
            .stdin(Stdio::null());
        c
    }

    /// `name args`' stdout when it exits 0.
    pub fn output(&self, name: &str, args: &[&str]) -> Option<String> {
        let out = self.command(name).args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Polls `done` until it holds; panics with the daemons' logs after [`WAIT`].
    pub fn wait_until(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "waited {WAIT:?} for {what}\n{}",
                self.logs()
            );
            std::thread::sleep(POLL);
        }
    }

    /// The daemons' logs, the queue and the processes running in the
    /// cluster's dir, for a failure message.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        for name in ["munged.log", "slurmctld.log", "slurmd.log"] {
            let log = std::fs::read_to_string(self.root().join("log").join(name));
            text += &format!("--- {name}\n{}\n", log.unwrap_or_default());
        }
        let jobs = self.output("scontrol", &["show", "job", "-o"]);
        text += &format!("--- scontrol show job\n{}\n", jobs.unwrap_or_default());
        text += &format!("--- processes\n{:#?}\n", processes_in(self.root()));
        text
    }

    /// Cancels every job and stops the daemons (SIGTERM, and SIGKILL for
    /// one that has not exited after [`WAIT`]); returns their pids, reaped.
    pub fn stop(&mut self) -> Vec<u32> {
        if !self.daemons.is_empty() {
            let _ = self.command("scancel").args(["--user", "root"]).status();
        }
        let pids: Vec<u32> = self.daemons.iter().map(|(_, c)| c.id()).collect();
        // Slurm's daemons first: they talk to munged while they stop.
        for (_, child) in self.daemons.iter_mut().rev() {
            // SIGTERM: each daemon saves its state and exits.
            // SAFETY: kill takes no pointers; the pid is our own unreaped child.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + WAIT;
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(POLL);
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        self.daemons.clear();
        pids
    }

    fn start_munged(&mut self) {
        let munge = self.root().join("munge");
        let key = munge.join("munge.key");
        let mut bytes = [0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            .unwrap();
        std::fs::write(&key, bytes).unwrap();
        set_mode(&key, 0o400);
        let arg = |flag: &str, name: &str| format!("--{flag}={}", munge.join(name).display());
        let args = [
            "-F".to_owned(),
            arg("key-file", "munge.key"),
            arg("socket", "munge.sock"),
            arg("pid-file", "munged.pid"),
            arg("seed-file", "munged.seed"),
            format!(
                "--log-file={}",
                self.root().join("log/munged.log").display()
            ),
        ];
        self.spawn(Command::new(program("munged")).args(args), "munged");
        let socket = munge.join("munge.sock");
        self.wait_until("munged's socket", |_| socket.exists());
    }

    fn spawn_daemon(&mut self, name: &'static str, args: &[&str]) {
        let mut c = Command::new(program(name));
        c.args(args).arg(&self.conf).env("SLURM_CONF", &self.conf);
        self.spawn(&mut c, name);
    }

    fn spawn(&mut self, command: &mut Command, name: &'static str) {
        let log =
            std::fs::File::create(self.root().join("log").join(format!("{name}.out"))).unwrap();
        let child = command
            .current_dir(self.root())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let mut pids = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(self.root().join("daemon.pids"))
            .unwrap();
        writeln!(pids, "{}", child.id()).unwrap();
        self.daemons.push((name, child));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
        // The watchdog's sweep takes whatever a failed test left (a job
        // still running); closing its pipe sets it off, and it exits.
        if let Some((mut watchdog, stdin)) = self.watchdog.take() {
            drop(stdin);
            let _ = watchdog.wait();
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Two loopback ports free right now (Slurm's ports are fixed in its
/// config), both bound at once so they differ.
fn free_ports() -> (u16, u16) {
    let port = |l: &TcpListener| l.local_addr().unwrap().port();
    let a = TcpListener::bind("127.0.0.1:0").unwrap();
    let b = TcpListener::bind("127.0.0.1:0").unwrap();
    (port(&a), port(&b))
}

/// The watchdog: a shell in its own session (so a kill of the test's
/// process group spares it) that waits on a pipe from the test. When the
/// test closes it, or dies, or [`WATCHDOG_LIMIT`] passes, it kills the
/// daemons listed in `dir/daemon.pids` and every process whose working
/// directory is in `dir` (`slurmstepd` inherits slurmd's, the jobs run in
/// a dir below it), removes `dir` and exits.
fn start_watchdog(dir: &Path) -> (Child, ChildStdin) {
    const SCRIPT: &str = r#"
read -r -t "$2" _ || true
while read -r pid; do kill -KILL "$pid" 2>/dev/null; done < "$1/daemon.pids"
for p in /proc/[0-9]*; do
    case "$(readlink "$p/cwd" 2>/dev/null)" in
        "$1" | "$1"/*) kill -KILL "${p#/proc/}" 2>/dev/null ;;
    esac
done
rm -rf -- "$1"
"#;
    let mut child = Command::new("setsid")
        .args(["bash", "-c", SCRIPT, "slurm-watchdog"])
        .arg(dir.canonicalize().unwrap())
        .arg(WATCHDOG_LIMIT.as_secs().to_string())
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        // Not the test's stderr: nextest counts a process holding it as leaked.
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// The slurm.conf: one node, loopback only, every path in `dir`, no
/// cgroups, no accounting database, quick requeue.
fn slurm_conf(dir: &Path) -> String {
    let d = dir.display();
    let (ctld_port, slurmd_port) = free_ports();
    format!(
        "# A one-node cluster for a test; every path is in its temp dir.
ClusterName=subagenttest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
# Bind the address the node resolves to (loopback), not every address.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire also sets how long a requeued job waits before it may start
# again (default 120 s).
AuthInfo=socket={d}/munge/munge.sock,cred_expire=5
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/state/slurmctld.pid
SlurmdPidFile={d}/spool/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
# Look at pending jobs every second (a requeued job's begin time passes
# without an event that would wake the scheduler).
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
KillWait=5
ReturnToService=2
# The node as declared below, whatever this machine has: 4 array tasks of
# 4 CPUs and 8G each run side by side.
SlurmdParameters=config_overrides
NodeName={NODE} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=16 RealMemory=65536 State=UNKNOWN
PartitionName=test Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"
    )
}
