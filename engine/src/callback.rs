//! Task tokens of `.waitForTaskToken` tasks: a task waiting for its callback registers
//! its token here; `Engine::send_task_success` / `send_task_failure` /
//! `send_task_heartbeat` answer it, as Step Functions' SendTask* calls do.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{oneshot, Notify};

use crate::error::Failure;

/// Why an answer to a task token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// No task waits for this token: it never existed, was already answered, or its
    /// task ended (timed out, failed, execution over). Step Functions says
    /// `TaskDoesNotExist`, `InvalidToken` or `TaskTimedOut`.
    #[error("no task waits for the task token '{token}' (unknown, already answered, or its task has ended)")]
    TaskDoesNotExist { token: String },
}

struct Waiter {
    answer: oneshot::Sender<Result<Value, Failure>>,
    beat: Arc<Notify>,
}

/// What a waiting task holds: the answer to come and the heartbeats.
pub(crate) struct Waiting {
    pub answer: oneshot::Receiver<Result<Value, Failure>>,
    pub beat: Arc<Notify>,
}

#[derive(Default)]
pub(crate) struct Callbacks {
    waiting: Mutex<HashMap<String, Waiter>>,
}

impl Callbacks {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiter>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A task starts waiting for `token` (before its function is invoked, so an answer
    /// sent during the invocation is not lost).
    pub fn register(&self, token: &str) -> Waiting {
        let (tx, rx) = oneshot::channel();
        let beat = Arc::new(Notify::new());
        self.map().insert(
            token.to_string(),
            Waiter {
                answer: tx,
                beat: beat.clone(),
            },
        );
        Waiting { answer: rx, beat }
    }

    /// The task stopped waiting (answered, failed, timed out, cancelled).
    pub fn forget(&self, token: &str) {
        self.map().remove(token);
    }

    pub fn answer(&self, token: &str, answer: Result<Value, Failure>) -> Result<(), CallbackError> {
        let waiter = self.map().remove(token);
        let gone = || CallbackError::TaskDoesNotExist {
            token: token.to_string(),
        };
        let w = waiter.ok_or_else(gone)?;
        w.answer.send(answer).map_err(|_| gone())
    }

    pub fn heartbeat(&self, token: &str) -> Result<(), CallbackError> {
        match self.map().get(token) {
            Some(w) => {
                w.beat.notify_one();
                Ok(())
            }
            None => Err(CallbackError::TaskDoesNotExist {
                token: token.to_string(),
            }),
        }
    }

    pub fn tokens(&self) -> Vec<String> {
        let mut v: Vec<String> = self.map().keys().cloned().collect();
        v.sort();
        v
    }
}

/// Removes the token when the waiting task ends, however it ends.
pub(crate) struct Registration<'a> {
    pub callbacks: &'a Callbacks,
    pub token: String,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.callbacks.forget(&self.token);
    }
}
