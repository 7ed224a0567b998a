//! Counting the AWS requests a client sends, by operation (`DescribeType`,
//! `DescribeSecurityGroupRules`...): an SDK interceptor shared by every client built with
//! it. A retried request counts once per attempt, which is what AWS bills and throttles.
//! The `export-plan` step reports these counts (the registry is read once per type, so
//! they grow with the number of types, not of resources).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;

/// Requests sent, by operation name. Clones share the counts.
#[derive(Debug, Clone, Default)]
pub struct CallCounter {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl CallCounter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The counts so far, by operation name.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        match self.counts.lock() {
            Ok(m) => m.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Requests of one operation so far.
    pub fn get(&self, operation: &str) -> u64 {
        self.snapshot().get(operation).copied().unwrap_or(0)
    }

    fn add(&self, operation: &str) {
        let mut m = match self.counts.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        *m.entry(operation.to_string()).or_insert(0) += 1;
    }
}

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "CallCounter"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = cfg
            .load::<Metadata>()
            .map(|m| m.name().to_string())
            .unwrap_or_else(|| "unknown".to_string());
        self.add(&op);
        Ok(())
    }
}
