"""EnvGen: LLM-generated environment configurations that target the skills an agent is weak at.

    from llmgym.envgen import DesignSpec, make_designer, ConfigMixture, SkillStats

    spec = DesignSpec.from_env_id("llmgym/Crafter-v0")
    designer = make_designer(spec, "openai:gpt-4o", run_folder="runs/envgen")   # or "frontier"
    designs = designer.propose()                       # 4 environments, each with a purpose
    env = ConfigMixture(gymnasium.make(spec.env_id), designs, ratio=0.5)
    ...train, evaluate per-skill success...
    designs = designer.propose(SkillStats.from_episodes(achieved, spec.skills))

See docs/envgen.md.
"""

from llmgym.envgen.designers import (
    Designer,
    FrontierChoice,
    FrontierDesigner,
    LLMDesigner,
    ReplayDesigner,
    RuleBasedDesigner,
    RunLog,
    make_designer,
)
from llmgym.envgen.mixture import ConfigMixture, make_mixture_vector_env
from llmgym.envgen.parsing import (
    Design,
    ParsedReply,
    extract_json,
    parse_designs,
    validate_overrides,
)
from llmgym.envgen.prompts import (
    EnvGenPrompt,
    GenericPrompt,
    envgen_overrides,
    initial_prompt,
    prompt_style,
    repair_prompt,
    update_prompt,
)
from llmgym.envgen.spec import DesignSpec, SkillStats

__all__ = [
    "ConfigMixture",
    "Design",
    "DesignSpec",
    "Designer",
    "EnvGenPrompt",
    "FrontierChoice",
    "FrontierDesigner",
    "GenericPrompt",
    "LLMDesigner",
    "ParsedReply",
    "ReplayDesigner",
    "RuleBasedDesigner",
    "RunLog",
    "SkillStats",
    "envgen_overrides",
    "extract_json",
    "initial_prompt",
    "make_designer",
    "make_mixture_vector_env",
    "parse_designs",
    "prompt_style",
    "repair_prompt",
    "update_prompt",
    "validate_overrides",
]
