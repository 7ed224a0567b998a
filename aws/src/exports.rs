//! Removing a stack from its region's exports index (docs/state-and-lock.md, "The exports index",
//! docs/destroy.md, "How a stack finishes" step 4): read with its ETag (rebuild from the region's records when
//! missing or unreadable), drop the stack's entries, write `If-Match` the ETag read, retry on 412
//! up to 5 times (100 ms doubling to 1 s); an index left listing nothing is deleted (never
//! written). Never fails the destroy: problems are warnings.

use crate::store::{now_ms, Precondition, StateStore};
use cdkd_core::exports::{parse_index, rebuild, remove_producer, serialize};
use cdkd_core::keys::exports_index_key;
use serde_json::{Map, Value};

impl StateStore {
    /// Drops `(stack, region)`'s exports from the region's index; problems are logged
    /// as warnings, never returned (the index is a derived view).
    pub async fn remove_from_exports_index(&self, stack: &str, region: &str) {
        if let Err(e) = try_remove(self, &[stack], region).await {
            tracing::warn!("exports index of {region} not updated after destroying {stack}: {e}");
        }
    }

    /// Drops the exports of every `(stack, region)` from its region's index: one read
    /// and at most one write per region, whatever the number of stacks (an export's
    /// cleanup of a tree). Problems are logged as warnings, never returned.
    pub async fn remove_stacks_from_exports_index(&self, stacks: &[(String, String)]) {
        let mut regions: Vec<&str> = stacks.iter().map(|(_, r)| r.as_str()).collect();
        regions.sort_unstable();
        regions.dedup();
        for region in regions {
            let names: Vec<&str> = stacks
                .iter()
                .filter(|(_, r)| r == region)
                .map(|(s, _)| s.as_str())
                .collect();
            if let Err(e) = try_remove(self, &names, region).await {
                tracing::warn!(
                    "exports index of {region} not updated after exporting {}: {e}",
                    names.join(", ")
                );
            }
        }
    }
}

async fn try_remove(store: &StateStore, stacks: &[&str], region: &str) -> Result<(), String> {
    let key = exports_index_key(&store.prefix, region);
    // A lost conditional write is tried again with the one retry policy's pauses.
    let lost = crate::retry::Backoff::LOST_WRITE;
    for attempt in 0..=lost.retries {
        let (mut index, etag) = match store.get_raw(&key).await.map_err(|e| e.to_string())? {
            Some((bytes, etag)) => match parse_index(&bytes) {
                Ok(i) => (i, Some(etag)),
                Err(cdkd_core::exports::IndexError::Unreadable(_)) => {
                    (rebuilt(store, region).await?, None)
                }
                Err(e) => return Err(e.to_string()),
            },
            // No index: nothing lists the stack, and readers rebuild a missing index
            // from the records (docs/state-and-lock.md, "The exports index"), so none is written here.
            None => return Ok(()),
        };
        let mut changed = false;
        for stack in stacks {
            changed |= remove_producer(&mut index, stack, region);
        }
        if !changed && etag.is_some() {
            return Ok(());
        }
        if holds_nothing(&index) {
            // An index that lists nothing is no index: readers rebuild a missing one
            // from the records, so none is written and an existing one is deleted (over
            // the version read).
            let Some(etag) = &etag else {
                return Ok(());
            };
            match store.delete_raw_strict(&key, Some(etag)).await {
                Ok(()) => return Ok(()),
                Err(f) if f.is_no_such_key() => return Ok(()),
                Err(f) if f.is_precondition_failed() => {
                    tokio::time::sleep(lost.delay(attempt)).await;
                    continue;
                }
                Err(f) => return Err(f.message),
            }
        }
        index.insert("lastModified".into(), Value::from(now_ms()));
        let pre = match &etag {
            Some(e) => Precondition::IfMatch(e.clone()),
            None => Precondition::None,
        };
        match store
            .put_raw_conditional(&key, serialize(&index).into_bytes(), &pre)
            .await
        {
            Ok(_) => return Ok(()),
            Err(f) if f.is_precondition_failed() => {}
            Err(f) => return Err(f.message),
        }
        tokio::time::sleep(lost.delay(attempt)).await;
    }
    Err("the index kept changing (5 conditional writes lost)".into())
}

/// Whether an index lists no export at all.
fn holds_nothing(index: &Map<String, Value>) -> bool {
    index
        .get("exports")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
}

/// The index rebuilt from every record of the region (the destroyed stack's record is
/// already gone, so it contributes nothing).
async fn rebuilt(store: &StateStore, region: &str) -> Result<Map<String, Value>, String> {
    let refs = store.list_refs().await.map_err(|e| e.to_string())?;
    let mut records = Vec::new();
    for r in refs
        .into_iter()
        .filter(|r| r.region.as_deref() == Some(region))
    {
        if let Ok(Some(l)) = store.get_state(&r.stack, region).await {
            records.push((r.stack, l.record.body));
        }
    }
    Ok(rebuild(
        region,
        records.iter().map(|(s, b)| (s.as_str(), b)),
        now_ms(),
    ))
}
