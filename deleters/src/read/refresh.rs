//! One stack's refresh under its lock (docs/repairs.md, "Order of checks" step 5, "Per resource"): lock, read
//! the record (its ETag is the one the save is conditional on), ask SSM about the
//! public parameters its longer values embed, read every resource (bounded
//! concurrency), apply core's decision, save with `If-Match`, release.
//!
//! A record another writer saved while this one was being refreshed fails the save
//! ([`RefreshError::Stale`]): nothing is written and the other writer's record stands.

use cdkd_aws::ssm::Ssm;
use cdkd_aws::{LockError, LockManager, Precondition, StateStore, StoreError};
use cdkd_core::repair::refresh::{apply_refresh, check_shape, ShapeRefusal, StackRefresh};
use cdkd_core::repair::ssm::{ssm_needs_for_record, ParamType, SsmAnswer, SsmAnswers, SsmScope};
use cdkd_core::state::StateRecord;
use cdkd_core::view::repair::{refresh_stale, release_failed_warning};
use cdkd_core::view::state::resolve::no_state_found;
use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};

use super::Readers;

/// The lock operation refresh-observed records.
pub const LOCK_OPERATION: &str = "state-refresh-observed";

/// How far up a nested stack's parent chain is followed before giving up (the chain
/// then counts as unknown, so no SSM call is made).
const MAX_ANCESTORS: usize = 16;

/// Why a stack was not refreshed. Each displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    /// Another process holds the stack's lock (cdkd's contention refusal).
    #[error("{0}")]
    Locked(String),
    /// The lock could not be taken for another reason.
    #[error("{0}")]
    Lock(String),
    /// The record vanished before the lock was taken.
    #[error("{0}")]
    NoState(String),
    /// The record's shape cannot be refreshed.
    #[error(transparent)]
    Shape(#[from] ShapeRefusal),
    /// The conditional save failed: another writer saved the record in between.
    #[error("{0}")]
    Stale(String),
    /// The state bucket failed.
    #[error(transparent)]
    Store(StoreError),
}

/// What one stack's refresh did.
#[derive(Debug)]
pub struct StackRun {
    pub outcome: Result<StackRefresh, RefreshError>,
    /// The warning when the lock could not be released.
    pub release_warning: Option<String>,
}

/// Inputs of one stack's refresh beyond the clients.
#[derive(Debug, Clone, Copy)]
pub struct RefreshOptions<'a> {
    /// The lock owner (`cdkd_core::lock::cli_owner`).
    pub owner: &'a str,
    /// Reads in flight at once within the record.
    pub concurrency: usize,
    /// Now, for `lastModified`.
    pub now_ms: i64,
}

/// Refreshes `stack` in `region`: `readers` and `ssm` are clients of that region.
pub async fn refresh_stack(
    store: &StateStore,
    locks: &LockManager,
    readers: &Readers,
    ssm: &Ssm,
    stack: &str,
    region: &str,
    opts: RefreshOptions<'_>,
) -> StackRun {
    let held = match locks
        .acquire(stack, Some(region), opts.owner, Some(LOCK_OPERATION))
        .await
    {
        Ok(h) => h,
        Err(LockError::Held { message }) => {
            return StackRun {
                outcome: Err(RefreshError::Locked(message)),
                release_warning: None,
            }
        }
        Err(e) => {
            return StackRun {
                outcome: Err(RefreshError::Lock(e.to_string())),
                release_warning: None,
            }
        }
    };
    let outcome = refresh_locked(store, readers, ssm, stack, region, opts).await;
    let release_warning = locks
        .release(&held)
        .await
        .err()
        .map(|e| release_failed_warning(stack, region, &e.to_string()));
    StackRun {
        outcome,
        release_warning,
    }
}

async fn refresh_locked(
    store: &StateStore,
    readers: &Readers,
    ssm: &Ssm,
    stack: &str,
    region: &str,
    opts: RefreshOptions<'_>,
) -> Result<StackRefresh, RefreshError> {
    let Some(loaded) = store
        .get_state(stack, region)
        .await
        .map_err(RefreshError::Store)?
    else {
        return Err(RefreshError::NoState(no_state_found(
            stack,
            region,
            &store.bucket,
            &store.prefix,
        )));
    };
    let mut body = loaded.record.body;
    check_shape(&body, stack, region)?;
    let ancestors = ancestors(store, &body, region).await;
    let chain: Option<Vec<&Map<String, Value>>> = ancestors.as_ref().map(|a| a.iter().collect());
    let scope = SsmScope::for_record(&body, region, chain.as_deref());
    let (answers, reads) = futures::join!(
        ssm_answers(
            ssm,
            scope,
            ssm_needs_for_record(&body, scope),
            opts.concurrency
        ),
        readers.read_record(&body, opts.concurrency)
    );
    let result = apply_refresh(&mut body, &reads, &answers, opts.now_ms);
    let record = StateRecord::from_body(body);
    let saved = if loaded.migration_pending {
        store.migrate_legacy_state(stack, region, &record).await
    } else {
        store
            .put_state(stack, region, &record, Precondition::IfMatch(loaded.etag))
            .await
    };
    match saved {
        Ok(_) => Ok(result),
        Err(StoreError::Conflict { .. }) => Err(RefreshError::Stale(refresh_stale(stack, region))),
        Err(e) => Err(RefreshError::Store(e)),
    }
}

/// The records of a nested child's parent chain, nearest first; `None` when the record
/// is no nested child's or any link of the chain cannot be read (core then treats the
/// chain as possibly reading another region).
async fn ancestors(
    store: &StateStore,
    record: &Map<String, Value>,
    region: &str,
) -> Option<Vec<Map<String, Value>>> {
    record.get("parentStack")?;
    let mut chain: Vec<Map<String, Value>> = Vec::new();
    let mut link = Some(StateRecord::from_body(record.clone()).parent_link()?);
    while let Some(l) = link {
        if chain.len() >= MAX_ANCESTORS {
            return None;
        }
        let r = l.region.clone().unwrap_or_else(|| region.to_owned());
        let parent = store.get_state(&l.stack, &r).await.ok()??;
        link = if parent.record.body.contains_key("parentStack") {
            Some(parent.record.parent_link()?)
        } else {
            None
        };
        chain.push(parent.record.body);
    }
    Some(chain)
}

/// `ssm:GetParameter` (`WithDecryption: false`) once per name, in the client's region.
/// A missing parameter and any failed call answer [`SsmAnswer::Failed`].
pub async fn ssm_answers(
    ssm: &Ssm,
    scope: SsmScope,
    names: Vec<String>,
    concurrency: usize,
) -> SsmAnswers {
    let answered: Vec<(String, SsmAnswer)> = stream::iter(names)
        .map(|name| async move {
            let answer = match ssm.get_parameter(&name).await {
                Ok(p) => SsmAnswer::Parameter {
                    param_type: ParamType::from_aws(&p.param_type),
                    value: p.value,
                },
                Err(e) => {
                    tracing::debug!("{e}");
                    SsmAnswer::Failed
                }
            };
            (name, answer)
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut answers = SsmAnswers::new(scope);
    for (name, answer) in answered {
        answers.insert(name, answer);
    }
    answers
}
