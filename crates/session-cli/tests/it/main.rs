//! The integration tests of the `sessions` binary, built as one test binary (one link for
//! all of them): each module pins one behaviour and runs the binary
//! (`CARGO_BIN_EXE_sessions`) through the helpers of [`support`]. The insta snapshots are in
//! `snapshots/`, named `it__<module>__<test>.snap`.
//!
//! Run one module with `cargo test -p session-cli --test it MODULE::`.

mod support;

mod alias_locks_in_retention;
mod aliased_sessions;
mod channel_after_the_96_import;
mod check_max_problems;
mod cli;
mod dangling_first_kept;
mod demo;
mod duration_flags;
mod export_html;
mod hard_linked_sessions;
mod honest_counts;
mod honest_texts;
mod hostile_names;
mod link_swapped_during_repair;
mod migrate_from_sqlite;
mod multiple_tips;
mod needs_migration;
mod non_regular_files;
mod openclaw_archive_clear;
mod openclaw_cleanup;
mod openclaw_list;
mod openclaw_store_reads;
mod output_escaping;
mod pi_fixture;
mod read_commands;
mod redis_backend;
mod repair_store_root;
mod repair_through_an_agent_link;
mod retention_guard_rails;
mod running_gateway;
mod same_session_id;
mod search_and_usage_honour_no_color;
mod search_and_usage_name_a_file_once;
mod search_and_usage_refuse_filters_that_match_nothing;
mod search_marks_branches_and_exits_like_grep;
mod search_reports_lines_that_are_not_json;
mod serve_branch_from_here;
mod serve_guards_every_request;
mod serve_lists_and_searches_the_store;
mod serve_pages_run_in_chromium;
mod serve_reads_a_sqlite_store_read_only;
mod serve_refuses_path_traversal;
mod serve_streams_foreign_appends;
mod serve_viewer_branches_and_goes_live;
mod sidecars_not_sessions;
mod sqlite_installs;
mod unlock_addressing;
mod usage_counts_openclaw_archived_transcripts;
mod usage_json_names_the_time_zone;
mod usage_json_shape;
mod usage_matches_pi_export;
mod usage_reports_what_it_cannot_count;
mod verify_import;
mod viewer_in_chromium;
mod write_command_reports;
mod write_commands;
