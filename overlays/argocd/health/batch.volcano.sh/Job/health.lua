-- Health of a Volcano Job (batch.volcano.sh), which Argo CD has no check for: without one a
-- failed training reads Healthy. From status.state.phase (volcano-sh/apis batch/v1alpha1
-- JobPhase): Completed → Healthy; Failed (retries exhausted) and Terminated (ended by a
-- policy such as PodFailed: TerminateJob) → Degraded; Aborted (`vcctl job suspend`) →
-- Suspended; Pending (waiting for the gang to be scheduled), Running, Restarting, Completing,
-- Terminating and Aborting → Progressing.
-- Runs as a resource.customizations.health script: Lua 5.1 (gopher-lua) with the base, table
-- and package libraries only, so no string functions.
local hs = {status = "Progressing", message = "Waiting for the Volcano controller"}
if obj.status == nil or obj.status.state == nil or obj.status.state.phase == nil then
  return hs
end
local state = obj.status.state
local phase = state.phase
local detail = phase
if state.message ~= nil and state.message ~= "" then
  detail = phase .. ": " .. state.message
end
if phase == "Completed" then
  hs.status = "Healthy"
elseif phase == "Failed" or phase == "Terminated" then
  hs.status = "Degraded"
elseif phase == "Aborted" then
  hs.status = "Suspended"
end
hs.message = detail
if hs.status == "Progressing" and obj.status.retryCount ~= nil and obj.status.retryCount > 0 then
  hs.message = detail .. " (retry " .. tostring(obj.status.retryCount) .. ")"
end
return hs
