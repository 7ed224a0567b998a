//! This host and its processes, as a local run names them in its `run.json` and its
//! locks, and as a later command tells whether such a run is still alive
//! (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").

/// This host's name: `$HOSTNAME`, else `/etc/hostname`, else `host`.
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "host".into())
}

/// Whether the process `pid` of this host is alive and is a cdkd-flow process. Where
/// `/proc` tells, a zombie or a pid reused by another program counts as gone (a local
/// run's lock is taken over only from a run known to have ended, docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first");
/// elsewhere a signal 0 reaching it (or a process of someone else's) counts as alive.
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid_t) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid_t <= 0 {
        return false;
    }
    let proc_dir = std::path::Path::new("/proc");
    if proc_dir.is_dir() {
        let dir = proc_dir.join(pid.to_string());
        return match std::fs::read(dir.join("cmdline")) {
            Ok(cmd) => {
                let zombie = std::fs::read_to_string(dir.join("stat"))
                    .ok()
                    .and_then(|s| {
                        s.rsplit_once(')')
                            .map(|(_, rest)| rest.trim_start().starts_with('Z'))
                    })
                    .unwrap_or(false);
                !zombie && String::from_utf8_lossy(&cmd).contains("cdkd-flow")
            }
            Err(_) => false,
        };
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks the process exists.
    let r = unsafe { libc::kill(pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        // A process whose command line names cdkd-flow (a run's), alive until killed.
        let mut run = std::process::Command::new("bash")
            .args(["-c", "exec -a cdkd-flow sleep 30"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(process_alive(run.id()));
        run.kill().unwrap();
        run.wait().unwrap();
        assert!(!process_alive(run.id()), "a reaped run is gone");
        // Another program is not a run, alive or not.
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(!process_alive(other.id()));
        other.kill().unwrap();
        other.wait().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
        assert!(!process_alive(0));
    }
}
