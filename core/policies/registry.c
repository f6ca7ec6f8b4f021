/*
 * registry.c - every policy, by name. The CLI, the Python binding and the
 * tests iterate this table: adding a policy is one line here.
 */
#include <string.h>
#include "swaplab/policy.h"

extern const sl_policy sl_policy_v6_9;
extern const sl_policy sl_policy_v6_10;
extern const sl_policy sl_policy_nonfull_2024;
extern const sl_policy sl_policy_v6_12;
extern const sl_policy sl_policy_v6_15;
extern const sl_policy sl_policy_v6_18;
extern const sl_policy sl_policy_buddy;
extern const sl_policy sl_policy_first_fit;
extern const sl_policy sl_policy_noncontig;
extern const sl_policy sl_policy_proposal_reuse;
extern const sl_policy sl_policy_proposal_reserve;
extern const sl_policy sl_policy_proposal_retag;
extern const sl_policy sl_policy_proposal_holes;
extern const sl_policy sl_policy_proposal_holes_first;
extern const sl_policy sl_policy_proposal_compact;
extern const sl_policy sl_policy_proposal_kcompact;

const sl_policy *const sl_policies[] = {
	&sl_policy_v6_9,
	&sl_policy_v6_10,
	&sl_policy_nonfull_2024,
	&sl_policy_v6_12,
	&sl_policy_v6_15,
	&sl_policy_v6_18,
	&sl_policy_buddy,
	&sl_policy_first_fit,
	&sl_policy_noncontig,
	&sl_policy_proposal_reuse,
	&sl_policy_proposal_reserve,
	&sl_policy_proposal_retag,
	&sl_policy_proposal_holes,
	&sl_policy_proposal_holes_first,
	&sl_policy_proposal_compact,
	&sl_policy_proposal_kcompact,
	NULL,
};

const sl_policy *sl_policy_find(const char *name)
{
	for (int i = 0; sl_policies[i]; i++)
		if (!strcmp(sl_policies[i]->name, name))
			return sl_policies[i];
	return NULL;
}
