//! Runs the binary for a command that follows something until it ends (`runs watch` of a
//! run the emulator never finishes) and reads its stderr line by line as it comes, so a
//! test can wait for a line, act, and wait for the next. The child is killed when the
//! follower is dropped. The environment is `crate::cli_command`'s.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub struct Follower {
    child: Child,
    lines: Receiver<String>,
    /// Every stderr line read so far, for the failure messages.
    seen: Vec<String>,
}

impl Follower {
    /// Starts `cdkd-flow <args>` with the emulator's environment and `env`.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Follower {
        let mut cmd = crate::cli_command(args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start cdkd-flow");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follower {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The first line from now on that contains `text`; panics, naming what was seen,
    /// when none comes within `timeout` or the command ended first.
    pub fn wait_for(&mut self, text: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no line with {text:?} within {timeout:?}: {:#?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "the command ended before a line with {text:?}: {:#?}",
                        self.seen
                    )
                }
            }
        }
    }

    /// Like [`Follower::wait_for`], but a line already read counts too: for lines whose
    /// order against the ones waited for before is not fixed.
    pub fn wait_seen(&mut self, text: &str, timeout: Duration) -> String {
        match self.seen.iter().find(|l| l.contains(text)) {
            Some(line) => line.clone(),
            None => self.wait_for(text, timeout),
        }
    }

    /// Sends `signal` (`libc::SIGINT`, `libc::SIGKILL` ...) to the command.
    pub fn signal(&self, signal: i32) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: a plain kill(2) of our own child.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill {pid}");
    }

    /// Whether the command is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the command to end by itself and returns its exit code with every stderr
    /// line it printed (from the start); panics, naming what was seen, when it is still
    /// running after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> (i32, String) {
        let deadline = Instant::now() + timeout;
        loop {
            while let Ok(line) = self.lines.try_recv() {
                self.seen.push(line);
            }
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    // The reader thread ends at the pipe's end: the last lines are in.
                    while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
                        self.seen.push(line);
                    }
                    return (status.code().unwrap_or(-1), self.seen.join("\n"));
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                other => panic!(
                    "the command did not end within {timeout:?} ({other:?}): {:#?}",
                    self.seen
                ),
            }
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
