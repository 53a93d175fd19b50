-- Health of a batch/v1 Job: Argo CD's built-in check (gitops-engine pkg/health/health_job.go),
-- with two differences, both about suspension:
-- 1. A Job that msgen's reconciler suspended because its training job ended (cleanPodPolicy:
--    the Scheduler and PS Jobs of an indexed-job render) did its part; it carries the reason
--    in the annotation msgen/stopped and reads Healthy, where the built-in check reads
--    Suspended and leaves the application Suspended after a successful training. A Job
--    suspended for any other reason (Kueue has not admitted it yet, a user paused it) still
--    reads Suspended.
-- 2. A Job that was resumed (Kueue admitted it: condition Suspended with status False) and
--    has not ended reads Progressing; the built-in check counts any Suspended condition as
--    an end and reads such a running Job Healthy.
-- Everything else reads as the built-in check reads it.
-- Runs as a resource.customizations.health script: Lua 5.1 (gopher-lua) with the base, table
-- and package libraries only, so no string functions.
local hs = {}
local failed = false
local failMsg = nil
local complete = false
local message = nil
local suspended = false
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Failed" then
      failed = true
      complete = true
      failMsg = condition.message
    elseif condition.type == "Complete" then
      complete = true
      message = condition.message
    elseif condition.type == "Suspended" then
      message = condition.message
      if condition.status == "True" then
        complete = true
        suspended = true
      end
    end
  end
end
if not complete then
  hs.status = "Progressing"
  hs.message = message
elseif failed then
  hs.status = "Degraded"
  hs.message = failMsg
elseif suspended then
  local annotations = obj.metadata.annotations
  local stopped = nil
  if annotations ~= nil then
    stopped = annotations["msgen/stopped"]
  end
  if stopped ~= nil then
    hs.status = "Healthy"
    hs.message = "stopped by msgen: " .. stopped
  else
    hs.status = "Suspended"
    hs.message = message
  end
else
  hs.status = "Healthy"
  hs.message = message
end
return hs
