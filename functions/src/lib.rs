//! cdkd-functions: the workflow steps. A step is `async fn(input, &Deps) -> Result<Output,
//! StepError>`: it reads its input, asks `cdkd-core` to decide and `cdkd-aws` /
//! `cdkd-deleters` to act, and returns a small result (Step Functions caps a payload at
//! 256 KiB; anything large lives under `<prefix>/_runs/<run-id>/`).
//!
//! The same functions run in Lambda (`src/bin/<step>.rs`) and in-process under
//! `cdkd-engine` (`cdkd-flow destroy --local`), dispatched by [`steps::invoke`].

pub mod aborted;
pub mod cleanup;
pub mod continued;
pub mod deps;
pub mod destroy;
pub mod ended;
pub mod error;
pub mod export;
pub mod held;
pub mod lambda;
#[cfg(feature = "engine")]
pub mod local;
pub mod notify;
pub mod refused;
pub mod runs;
pub mod steps;

pub use deps::Deps;
pub use error::StepError;

/// The state machine definitions, as deployed (`statemachines/`).
pub mod definitions {
    pub const DESTROY: &str = include_str!("../../statemachines/destroy.asl.json");
    pub const CLEANUP: &str = include_str!("../../statemachines/cleanup.asl.json");
    pub const EXPORT: &str = include_str!("../../statemachines/export.asl.json");

    /// Substitutions that route every step's `FunctionName` to the step itself: what the
    /// local engine uses in place of the deployed Lambda ARNs.
    pub fn local_substitutions() -> std::collections::HashMap<String, String> {
        crate::steps::STEPS
            .iter()
            .map(|(step, sub)| (sub.to_string(), step.to_string()))
            .collect()
    }
}
