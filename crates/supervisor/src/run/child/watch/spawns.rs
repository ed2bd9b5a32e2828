//! The watch's handlers for nested subagents: a worker's spawn request
//! admitted or refused, a nested run's end, and replies to the worker.
//!
//! Part of [`super::Watch`]'s state machine (the same rules: handlers never
//! wait on the worker); split out only to keep each file readable whole.

use subagent_protocol::message::LogLevel;
use subagent_protocol::{ErrorCode, SpawnRequest, SubagentReply, ToWorker, Usage};
use tokio::time::Instant;

use super::Watch;
use crate::run::admit::admission;
use crate::run::admit::reservation::Asked;
use crate::run::child::nested::{self, NestedDone};

impl Watch<'_, '_> {
    /// The worker asks for a nested subagent: depth and budget are checked
    /// here, before anything starts; the rest of admission is the
    /// supervisor's normal path, run by the future queued for the loop.
    pub(super) async fn on_spawn(&mut self, spawn: SpawnRequest) {
        let call_id = spawn.call_id.clone();
        if !self.parent_running() {
            let reply = nested::refused(
                call_id,
                ErrorCode::SubagentCancelled,
                "the calling subagent is being stopped".into(),
            );
            self.reply(reply);
            return;
        }
        let asked = Asked {
            max_turns: spawn.max_turns,
            max_cost: spawn.max_cost,
        };
        match admission::admit_spawn(self.ctx.request, &mut self.share, &self.record.usage, asked) {
            Err(refusal) => {
                self.refuse_spawn(nested::refused(call_id, refusal.code, refusal.message))
                    .await;
            }
            Ok((reservation, budget)) => {
                let parent = self.ctx.request;
                let mut request = nested::grandchild_request(
                    parent,
                    &self.ctx.journal.paths().session_file,
                    &spawn,
                    budget,
                );
                request.parent_view = self.ctx.layer.as_ref().and_then(|l| l.view());
                // Its spans are children of the tool call that started it.
                request.trace_parent = self.ctx.spans.parent_of_call(&call_id);
                let catalog = &self.ctx.config.catalog;
                if let Err(message) =
                    nested::hold_under_parent(parent, catalog, &spawn, &mut request)
                {
                    // Nothing started: the reservation goes back untouched.
                    self.share.settle(reservation, &Usage::default());
                    self.refuse_spawn(nested::refused(call_id, ErrorCode::InvalidInput, message))
                        .await;
                    return;
                }
                tracing::debug!(
                    run_id = %self.ctx.run_id,
                    agent = %request.agent,
                    max_turns = budget.max_turns,
                    "nested subagent admitted with its budget reserved"
                );
                self.nested_running += 1;
                self.starting.push(nested::start(
                    self.ctx.runner,
                    self.ctx.tree.clone(),
                    request,
                    call_id,
                    reservation,
                    self.subtree.child_token(),
                ));
            }
        }
    }

    /// A spawn refused before anything started: a log line in the session
    /// file, and the refusal as the tool's result.
    async fn refuse_spawn(&mut self, reply: SubagentReply) {
        tracing::info!(run_id = %self.ctx.run_id, output = %reply.output, "nested subagent refused");
        self.ctx
            .journal
            .log(
                LogLevel::Warn,
                format!("subagent call {} refused: {}", reply.call_id, reply.output),
            )
            .await;
        self.reply(reply);
    }

    /// A nested run ended: its reservation is settled and its result goes
    /// to the worker if the worker can still use it.
    pub(super) fn on_nested_done(&mut self, done: NestedDone) {
        self.share.settle(done.reservation, &done.reply.usage);
        self.nested_running = self.nested_running.saturating_sub(1);
        self.idle_deadline = Instant::now() + self.idle;
        if self.parent_running() {
            self.reply(done.reply);
        }
    }

    fn reply(&self, reply: SubagentReply) {
        // A worker that stopped reading is handled by the timeouts.
        let _ = self.link.send(ToWorker::SubagentResult(Box::new(reply)));
    }
}
