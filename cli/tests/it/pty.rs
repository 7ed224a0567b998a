//! Runs the binary with its stdin and stderr on a pseudo-terminal (`openpty`), as for a
//! person at a terminal: the CLI asks its questions only when stdin is a terminal
//! (cli/src/ask.rs). stdout stays a pipe, so the plan and the report are read apart from
//! the question. The answer is typed once the question shows on the terminal; a
//! question that never shows, or a run that does not end, fails the test after a
//! timeout instead of blocking it.
//!
//! The environment is the one `cdkd_tests::run_bin_env` gives the other tests: the
//! emulator's (`AWS_ENDPOINT_URL` on 127.0.0.1, checked, and the dummy credentials
//! `scripts/with-emulator.sh` exports), `NO_COLOR`, no `RUST_LOG`, no state machine from
//! the environment.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a run on a terminal printed and returned.
#[derive(Debug)]
pub struct PtyRun {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// stdout (a pipe).
    pub stdout: String,
    /// Everything the terminal showed: stderr and the echo of the answer (`\r\n` read
    /// as `\n`).
    pub terminal: String,
    /// Whether the question showed (and so the answer was typed).
    pub asked: bool,
}

/// How long the question may take to show, and the whole run.
pub struct Timeouts {
    pub question: Duration,
    pub run: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            question: Duration::from_secs(180),
            run: Duration::from_secs(300),
        }
    }
}

/// The terminal's output so far, and whether the terminal has closed (every slave fd
/// gone: the child and anything it started have ended).
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    closed: bool,
}

/// `cdkd-flow <args>` on a new pseudo-terminal; once `question` shows on it, `answer`
/// is typed (e.g. `"n\n"`). Panics when the run outlasts `t.run` (the child is killed
/// first) or the terminal cannot be opened.
pub fn run_on_pty(args: &[&str], question: &str, answer: &str, t: Timeouts) -> PtyRun {
    let (master, slave) = open_pty();
    let mut cmd = crate::cli_command(args);
    cmd.stdin(Stdio::from(slave.try_clone().expect("dup the pty slave")))
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().expect("run cdkd-flow");
    // The Command holds the parent's copies of the slave: dropped here, so that reading
    // the master ends (EIO) once the child has exited.
    drop(cmd);

    let mut stdout_pipe = child.stdout.take().expect("stdout piped");
    let stdout = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout_pipe.read_to_end(&mut out);
        out
    });
    let mut typing = master.try_clone().expect("dup the pty master");
    let screen = Arc::new((Mutex::new(Screen::default()), Condvar::new()));
    let reader = {
        let screen = Arc::clone(&screen);
        let mut master = master;
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                // Linux answers EIO once no slave fd is left open: the end of the output.
                let n = master.read(&mut buf).unwrap_or(0);
                let (lock, cv) = &*screen;
                let mut s = lock.lock().unwrap();
                if n == 0 {
                    s.closed = true;
                } else {
                    s.bytes.extend_from_slice(&buf[..n]);
                }
                cv.notify_all();
                if n == 0 {
                    break;
                }
            }
        })
    };

    // Wait for the question (or for the terminal to close without it).
    let asked = {
        let (lock, cv) = &*screen;
        let deadline = Instant::now() + t.question;
        let mut s = lock.lock().unwrap();
        loop {
            if String::from_utf8_lossy(&s.bytes).contains(question) {
                break true;
            }
            let now = Instant::now();
            if s.closed || now >= deadline {
                break false;
            }
            s = cv.wait_timeout(s, deadline - now).unwrap().0;
        }
    };
    if asked {
        typing
            .write_all(answer.as_bytes())
            .expect("type the answer");
    }

    let deadline = Instant::now() + t.run;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for cdkd-flow") {
            break status;
        }
        if Instant::now() >= deadline {
            // Only the child this helper started.
            let _ = child.kill();
            let _ = child.wait();
            let s = screen.0.lock().unwrap();
            panic!(
                "cdkd-flow {args:?} did not end within {:?} (asked: {asked}); the terminal showed:\n{}",
                t.run,
                String::from_utf8_lossy(&s.bytes)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(typing);
    let _ = reader.join();
    let stdout = stdout.join().unwrap_or_default();
    let terminal = String::from_utf8_lossy(&screen.0.lock().unwrap().bytes).replace("\r\n", "\n");
    PtyRun {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        terminal,
        asked,
    }
}

/// A new pseudo-terminal of 40 rows by 120 columns: (master, slave), both close-on-exec
/// (the child gets the slave only as the stdio it is given).
fn open_pty() -> (File, File) {
    let (mut master, mut slave): (libc::c_int, libc::c_int) = (-1, -1);
    let size = libc::winsize {
        ws_row: 40,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes the two fds through valid pointers to locals; the name
    // pointer may be null, and the termios pointer is null (defaults); the winsize is
    // only read.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty succeeded, so both are open fds that nothing else owns; each is
    // owned (and closed) by exactly one OwnedFd from here on.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    for fd in [&master, &slave] {
        // SAFETY: F_SETFD with FD_CLOEXEC on an fd owned above; no memory is involved.
        let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        assert_eq!(rc, 0, "fcntl: {}", std::io::Error::last_os_error());
    }
    (File::from(master), File::from(slave))
}
