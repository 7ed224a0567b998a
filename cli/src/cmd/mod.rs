pub mod cleanup;
pub mod destroy;
pub mod export;
pub mod force_unlock;
pub mod orphan;
pub mod runs;
pub mod state;
pub mod workflow;
