pub mod cleanup;
pub mod destroy;
pub mod force_unlock;
pub mod runs;
pub mod state;
pub mod workflow;
