//! The records the `state` commands work on: a listed key as the views take it, a stack
//! resolved to its one region, its record loaded or refused by name
//! (docs/state-views.md, "What every state command shares": finding one record).

use cdkd_aws::LoadedState;
use cdkd_core::keys::StackRef;
use cdkd_core::state::{resolve_single, LegacyOnly};
use cdkd_core::state_refusal::StateRefusal;
use cdkd_core::view::state::list::RefView;

use crate::context::Ctx;
use crate::error::CliError;

/// A record's listed key, as the views take it.
pub fn ref_view(r: &StackRef) -> RefView<'_> {
    RefView {
        stack: &r.stack,
        region: r.region.as_deref(),
    }
}

/// Resolves `stack` to one region-scoped ref, refusing an unknown, ambiguous or
/// legacy-only stack by name.
pub async fn resolve(
    ctx: &Ctx,
    stack: &str,
    stack_region: Option<&str>,
) -> Result<String, CliError> {
    let refs = ctx.store.list_refs().await?;
    let views: Vec<RefView<'_>> = refs.iter().map(ref_view).collect();
    let one = resolve_single(stack, &views, stack_region).map_err(|r| CliError::refused(&r))?;
    match one.region {
        Some(region) => Ok(region.to_string()),
        None => Err(CliError::refused(&LegacyOnly {
            stack: stack.to_string(),
        })),
    }
}

/// The record of `stack` in `region`, or the refusal naming it missing.
pub async fn load_record(ctx: &Ctx, stack: &str, region: &str) -> Result<LoadedState, CliError> {
    match ctx.store.get_state(stack, region).await {
        Ok(Some(s)) => Ok(s),
        Ok(None) => Err(no_record(ctx, stack, region)),
        Err(e) => Err(e.into()),
    }
}

/// The refusal naming the record of `stack` in `region` missing from the state bucket.
pub fn no_record(ctx: &Ctx, stack: &str, region: &str) -> CliError {
    CliError::refused(&StateRefusal::NoRecord {
        stack: stack.to_string(),
        region: region.to_string(),
        bucket: ctx.bucket.clone(),
        prefix: ctx.prefix.clone(),
    })
}
