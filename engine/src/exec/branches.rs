//! Map and Parallel attempts: their iterations and branches run as graphs of their own.

use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Value};

use super::failures::runtime;
use super::run::{Cur, Run};
use crate::error::Failure;
use crate::events::EventKind;
use crate::model::*;

impl Run {
    pub(super) async fn map_attempt(
        &self,
        c: &Cur<'_>,
        m: &MapSpec,
        raw: Value,
        retry: u32,
    ) -> Result<Value, Failure> {
        let ctx = self.ctx(c, retry, None);
        let eff = self.input_path(c, &raw, &ctx)?;
        let items = match &m.items_path {
            None => eff.clone(),
            Some(p) => {
                let root = if p.context { &ctx } else { &eff };
                p.select(root).ok_or_else(|| {
                    runtime(
                        &c.state.name,
                        c.entered_id,
                        &format!("Invalid path '{}' : No results for path", p.text),
                    )
                })?
            }
        };
        let Value::Array(items) = items else {
            return Err(runtime(
                &c.state.name,
                c.entered_id,
                "Map state input must be an array (check ItemsPath)",
            ));
        };
        let conc = match &m.max_concurrency {
            None => 0.0,
            Some(s) => self.seconds(c, s, &eff, "MaxConcurrencyPath")?,
        };
        let n = if conc <= 0.0 {
            items.len().max(1)
        } else {
            conc as usize
        };
        self.emit(
            EventKind::MapStateStarted,
            Some(&c.state.name),
            None,
            None,
            Some(json!({"length": items.len()})),
        );
        let mut inputs = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let v = match &m.item_selector {
                Some(t) => {
                    let ictx = self.ctx(
                        c,
                        retry,
                        Some(("Map", json!({"Item": {"Index": i, "Value": item}}))),
                    );
                    self.template(c, t, &eff, &ictx, "ItemSelector")?
                }
                None => item,
            };
            inputs.push((i, v));
        }
        let name = &c.state.name;
        let res: Result<Vec<Value>, Failure> =
            futures::stream::iter(inputs.into_iter().map(|(i, v)| async move {
                self.emit(
                    EventKind::MapIterationStarted,
                    Some(name),
                    Some(v.clone()),
                    None,
                    Some(json!({"index": i})),
                );
                match self.run_graph(&m.processor, v).await {
                    Ok(out) => {
                        self.emit(
                            EventKind::MapIterationSucceeded,
                            Some(name),
                            None,
                            Some(out.clone()),
                            Some(json!({"index": i})),
                        );
                        Ok(out)
                    }
                    Err(f) => {
                        self.emit_full(
                            EventKind::MapIterationFailed,
                            Some(name),
                            None,
                            None,
                            Some(&f),
                            Some(json!({"index": i})),
                        );
                        Err(f)
                    }
                }
            }))
            .buffered(n)
            .try_collect()
            .await;
        let results = match res {
            Ok(r) => {
                self.emit(EventKind::MapStateSucceeded, Some(name), None, None, None);
                Value::Array(r)
            }
            Err(f) => {
                self.emit_full(
                    EventKind::MapStateFailed,
                    Some(name),
                    None,
                    None,
                    Some(&f),
                    None,
                );
                return Err(f);
            }
        };
        self.state_output(c, &m.common, &raw, results, &ctx)
    }

    pub(super) async fn parallel_attempt(
        &self,
        c: &Cur<'_>,
        p: &ParallelSpec,
        raw: Value,
        retry: u32,
    ) -> Result<Value, Failure> {
        let ctx = self.ctx(c, retry, None);
        let eff = self.input_path(c, &raw, &ctx)?;
        let input = match &p.parameters {
            Some(t) => self.template(c, t, &eff, &ctx, "Parameters")?,
            None => eff,
        };
        let name = &c.state.name;
        self.emit(
            EventKind::ParallelStateStarted,
            Some(name),
            None,
            None,
            Some(json!({"branches": p.branches.len()})),
        );
        let res = futures::future::try_join_all(
            p.branches.iter().map(|b| self.run_graph(b, input.clone())),
        )
        .await;
        let results = match res {
            Ok(r) => {
                self.emit(
                    EventKind::ParallelStateSucceeded,
                    Some(name),
                    None,
                    None,
                    None,
                );
                Value::Array(r)
            }
            Err(f) => {
                self.emit_full(
                    EventKind::ParallelStateFailed,
                    Some(name),
                    None,
                    None,
                    Some(&f),
                    None,
                );
                return Err(f);
            }
        };
        self.state_output(c, &p.common, &raw, results, &ctx)
    }
}
