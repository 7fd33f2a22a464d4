-- An action taken by application code through the library's client (client.cancel) is
-- audited as such: actor kind 'client', the actor naming the process's user and host.
ALTER TABLE "audit_log" DROP CONSTRAINT "audit_log_actor_kind_known";--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_actor_kind_known" CHECK (actor_kind IN ('user', 'token', 'cli', 'client', 'system', 'anonymous'));
